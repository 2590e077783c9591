import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/contract/database.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/db/open/migrations.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { HOUR, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, count } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

/** Segments in the FTS index: one segid per segment in the %_idx table. */
function segments(db: Database): number {
  return count(db, 'SELECT count(DISTINCT segid) AS n FROM messages_fts_idx');
}

function hits(db: Database, word: string): number {
  return count(db, 'SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ?', [word]);
}

describe('FTS merging in the tick', () => {
  it('automerge is off: a write adds a segment and merges nothing', async () => {
    const { db } = await testDb();
    expect(db.get("SELECT v FROM messages_fts_config WHERE k = 'automerge'")).toEqual({ v: 0 });
    addChannel(db, 'a');
    for (let i = 0; i < 10; i++) addMessages(db, 'a', 1, T0, () => `solo ${i}`);
    // Ten transactions, ten segments (FTS5's default automerge would have merged them at four).
    expect(segments(db)).toBe(10);
    db.close();
  });

  it('a database made before migration 0002 is backed up, upgraded, and keeps its index', async () => {
    const dir = tempDir();
    const v1 = tempDir('agentbus-sql-');
    copyFileSync(join(defaultMigrationsDir(), '0001_schema.sql'), join(v1, '0001_schema.sql'));
    const old = await openTestDatabase(dir, { migrationsDir: v1 });
    // FTS5's default: no automerge row in the config table.
    expect(old.db.get("SELECT v FROM messages_fts_config WHERE k = 'automerge'")).toBeUndefined();
    addChannel(old.db, 'a');
    addMessages(old.db, 'a', 50, T0, (i) => `before upgrade ${i}`);
    old.db.close();

    const upgraded = await openTestDatabase(dir);
    expect(upgraded.migrations.applied).toEqual(loadMigrations(defaultMigrationsDir()).map((m) => m.version).filter((v) => v >= 2));
    expect(readdirSync(join(dir, 'backups'))).toHaveLength(1);
    expect(upgraded.db.get("SELECT v FROM messages_fts_config WHERE k = 'automerge'")).toEqual({ v: 0 });
    expect(hits(upgraded.db, 'upgrade')).toBe(50);
    upgraded.db.close();
  });

  it('the fts_merge step merges the segments writes left, in bounded transactions, and search still finds every row', async () => {
    const { db, dir } = await testDb();
    addChannel(db, 'a');
    for (let i = 0; i < 15; i++) addMessages(db, 'a', 20, T0, (j) => `shared word${i}x${j}`);
    const before = segments(db);
    expect(before).toBe(15);

    const report = await maintenanceFor(db, testConfig(dir), new TestClock({ start: T0 }), { lockTargetMs: undefined }).runTick();
    const step = report.steps.find((s) => s.name === 'fts_merge');
    expect(step).toMatchObject({ cutShort: false });
    expect(step!.error).toBeUndefined();
    expect(step!.ftsMerges).toBeGreaterThanOrEqual(2);
    expect(step!.transactions).toBe(step!.ftsMerges);
    // usermerge is 4: no level is left with four or more segments.
    expect(segments(db)).toBeLessThan(4);
    expect(hits(db, 'shared')).toBe(300);
    expect(hits(db, 'word7x19')).toBe(1);
    // FTS5's own check of the index against the content table fails with SQLITE_CORRUPT_VTAB on any mismatch.
    expect(() => db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
    db.close();
  });

  it('retention merges the delete markers as it goes, so the index does not pile up segments', async () => {
    const { db, dir } = await testDb();
    addChannel(db, 'a');
    addMessages(db, 'a', 3_000, T0 - 30 * HOUR, (i) => `gone ${i}`);
    const kept = addMessages(db, 'a', 5, T0, (i) => `kept ${i}`);
    const config = testConfig(dir, { message_retention_hours: 24 });
    // Adaptive chunks (from 250 rows): several delete transactions, each adding a segment of delete markers.
    const report = await maintenanceFor(db, config, new TestClock({ start: T0 }), { lockTargetMs: undefined }).runTick();
    const retention = report.steps.find((s) => s.name === 'retention')!;
    expect(retention.rows).toBe(3_000);
    expect(retention.transactions - retention.ftsMerges).toBeGreaterThan(1);
    expect(retention.ftsMerges).toBeGreaterThan(0);
    // What the tick leaves is what automerge would: no level holds usermerge (4) segments, so a level merge finds nothing.
    const before = count(db, 'SELECT total_changes() AS n');
    db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 64)");
    expect(count(db, 'SELECT total_changes() AS n') - before).toBeLessThan(2);
    expect(hits(db, 'gone')).toBe(0);
    expect(hits(db, 'kept')).toBe(kept.length);
    expect(() => db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
    db.close();
  });
});
