import { describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import { register, requireSession } from '../../src/bus/identity.js';
import type { BusContext } from '../../src/bus/bus-context.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { createMemoryLogger } from '../../src/log.js';
import { acquireLease, readLease } from '../../src/maintenance/lease.js';
import { usedBytes } from '../../src/maintenance/capacity.js';
import { BUS_TABLES, KEPT_TABLES, liveSessions, resetDatabase } from '../../src/maintenance/reset.js';
import { expectErrorSync } from '../support/expect-error.js';
import { indexHits, indexIntegrity, T0, tableNames, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, addRevision, count } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('reset', () => {
  it('wipes every bus table and the text index in place, re-seeds the lease, and never reuses a seq', async () => {
    const { db, dir } = await testDb();
    addChannel(db, 'a');
    addChannel(db, 'mem', 'memory');
    const seqs = addMessages(db, 'a', 50, T0, (i) => `lighthouse ${i}`);
    const memory = addRevision(db, 'mem', 1, 1, T0, 'lighthouse memory');
    db.run("INSERT INTO embeddings (seq, model, vector) VALUES (?, 'm', ?)", [memory, new Uint8Array(8)]);
    db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES ('alice', 'c', 'o', ?, ?)", [T0, T0]);
    db.run("INSERT INTO subscriptions (sender, channel, cursor_seq, last_activity) VALUES ('alice', 'a', 0, ?)", [T0]);
    db.run("INSERT INTO receipts (sender, key, fingerprint, result, expires_at) VALUES ('alice', 'k', 'f', '{}', ?)", [T0]);
    db.run("INSERT INTO notices (kind, message, set_at) VALUES ('capacity', 'full', ?)", [T0]);
    db.run(
      "INSERT INTO reservation_takeovers (holder, repository, pattern, taken_by, taken_at) VALUES ('alice', '/repo', 'src/**', 'bob', ?)",
      [T0],
    );
    acquireLease(db, { owner: 'someone', process: currentProcess(), clock: new TestClock({ start: T0 }) }, 60_000);

    const report = resetDatabase(db);
    expect(report.deleted.messages).toBe(51);
    // Every table holds exactly what a newly created database holds.
    const { db: fresh } = await testDb();
    for (const table of BUS_TABLES) {
      expect(db.all(`SELECT * FROM ${table}`), table).toEqual(fresh.all(`SELECT * FROM ${table}`));
    }
    // Counted as a new database counts: SQLite's live pages, PostgreSQL's summed message bytes.
    expect(usedBytes(db)).toBe(usedBytes(fresh));
    fresh.close();
    expect(count(db, 'SELECT count(*) AS n FROM leases')).toBe(1);
    expect(readLease(db)).toEqual({ owner: '', expiresAt: 0 });
    expect(indexHits(db, 'lighthouse')).toEqual([]);
    indexIntegrity(db);
    // The schema and its migration record survive.
    expect(count(db, 'SELECT count(*) AS n FROM schema_migrations')).toBeGreaterThan(0);

    addChannel(db, 'a');
    const [next] = addMessages(db, 'a', 1, T0, () => 'after reset');
    expect(next).toBeGreaterThan(Math.max(...seqs, memory));
    expect(indexHits(db, 'reset')).toEqual([next]);
    db.close();
  });

  it('empties every table of the schema but those it keeps for a stated reason', async () => {
    const { db } = await testDb();
    const emptied: readonly string[] = BUS_TABLES;
    const unaccounted = tableNames(db).filter((table) => !emptied.includes(table) && KEPT_TABLES[table] === undefined);
    expect(unaccounted).toEqual([]);
    db.close();
  });

  it('a live session is listed before the reset, then fails requireSession with not_registered and recovers by registering', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const ctx: BusContext = {
      db,
      config: testConfig(dir),
      clock,
      log: createMemoryLogger(),
      owner: 'process-1',
      processIdentity: currentProcess(),
      defaultContext: 'work',
    };
    const { display_name } = register(ctx, { name: 'alice' });
    // A holder on this clock whose heartbeat stopped a minute ago.
    db.run(
      "INSERT INTO sessions (sender, context, owner, heartbeat, registered_at, clock_domain, heartbeat_mono) VALUES ('ghost', 'c', 'o', ?, ?, ?, ?)",
      [T0 - 60_000, T0 - 60_000, clock.monotonicDomain!, clock.monotonic() - 60_000],
    );
    expect(liveSessions(db, clock, 'observer').map((s) => s.sender)).toEqual([display_name]);

    resetDatabase(db);
    expectErrorSync(() => requireSession(ctx, display_name), BusError, 'not_registered');
    expect(liveSessions(db, clock, 'observer')).toEqual([]);

    expect(register(ctx, { name: 'alice' }).display_name).toBe(display_name);
    expect(requireSession(ctx, display_name).sender).toBe(display_name);
    db.close();
  });
});
