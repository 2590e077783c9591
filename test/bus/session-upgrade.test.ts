import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { toEnvelope } from '../../src/bus/envelope.js';
import { register, requireSession } from '../../src/bus/identity.js';
import { receiptFingerprint } from '../../src/bus/receipts.js';
import { send, SendInput } from '../../src/bus/send.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/db/open/migrations.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { createMemoryLogger } from '../../src/log.js';
import { deleteExpiredReceipts } from '../../src/maintenance/stale-rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

const HOUR = 3_600_000;

describe('migration 0007 on a database made before it', () => {
  it('backs it up and upgrades it; old sessions are judged by watching their heartbeat, old receipts still replay and then age on this clock', async () => {
    const dir = tempDir();
    const before = tempDir('agentbus-sql-');
    const earlier = loadMigrations(defaultMigrationsDir()).filter((m) => m.version < 7);
    for (const { name } of earlier) copyFileSync(join(defaultMigrationsDir(), name), join(before, name));
    const clock = new TestClock();
    const old = await openTestDatabase(dir, { migrationsDir: before });
    expect(old.migrations.version).toBe(earlier.at(-1)!.version);
    // What agentbus before schema 7 wrote: a session of a running agent, one of its messages and the receipt for it.
    const raw = { as: 'Ann', channel: 'general', content: 'sent before the upgrade', idempotency_key: 'k-1' };
    const fingerprint = receiptFingerprint('send', { channel: 'general', ...toEnvelope(v.parse(SendInput, raw)) });
    old.db.transaction(() => {
      old.db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES ('Ann', 'repo', 'old-process', ?, ?)", [clock.ms, clock.ms]);
      const { lastInsertRowid: seq } = old.db.run(
        "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('general', 'Ann', 'repo', ?, 'note', ?, 100)",
        [clock.ms, raw.content],
      );
      old.db.run('INSERT INTO receipts (sender, key, fingerprint, result, expires_at) VALUES (?, ?, ?, ?, ?)', [
        'Ann',
        raw.idempotency_key,
        fingerprint,
        JSON.stringify({ seq }),
        clock.ms + HOUR,
      ]);
    });
    old.db.close();

    const upgraded = await openTestDatabase(dir);
    expect(upgraded.migrations.applied).toEqual(loadMigrations(defaultMigrationsDir()).filter((m) => m.version >= 7).map((m) => m.version));
    expect(readdirSync(join(dir, 'backups'))).toHaveLength(1);
    const { db } = upgraded;
    const ctx = (owner: string): BusContext => ({
      db,
      config: testConfig(dir),
      clock,
      log: createMemoryLogger(),
      owner,
      processIdentity: currentProcess(),
      defaultContext: 'repo',
    });

    // The clock is set forward: by the wall clock the old heartbeat is 2 h old, which proves nothing.
    clock.jump(2 * HOUR);
    expect(register(ctx('first'), { name: 'Ann' }).display_name).toBe('Ann2');
    // Unchanged for 30 s since it was first seen: the old holder has stopped.
    clock.advance(30_000);
    const ann = ctx('second');
    expect(register(ann, { name: 'Ann' }).display_name).toBe('Ann');
    expect(requireSession(ann, 'Ann').sender).toBe('Ann');

    // The receipt expired by its wall-clock expires_at long ago, yet a retry is answered from it.
    const original = db.get<{ result: string }>("SELECT result FROM receipts WHERE key = 'k-1'")!;
    expect(await send(ann, raw)).toEqual(JSON.parse(original.result));
    // The tick adopts it (its age starts on this clock) and deletes it one retention later.
    const retentionMs = 60 * 60_000;
    const tick = () => db.transaction(() => deleteExpiredReceipts(db, { clock, owner: 'ticker' }, retentionMs, 1000));
    expect(tick()).toBe(1);
    expect(db.get("SELECT clock_domain, created_mono FROM receipts WHERE key = 'k-1'")).toEqual({ clock_domain: clock.monotonicDomain, created_mono: clock.mono });
    clock.advance(retentionMs - 1);
    expect(tick()).toBe(0);
    clock.advance(1);
    expect(tick()).toBe(1);
    expect(db.get('SELECT count(*) AS n FROM receipts')).toEqual({ n: 0 });
    db.close();
  });
});
