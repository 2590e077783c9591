import { describe, expect, it } from 'vitest';
import { HOUR, indexHits, indexIntegrity, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, addRevision, count, evictedBefore } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('tick: retention', () => {
  it('evicts ordinary messages past message_retention_hours in chunks of 1,000 and raises each channel boundary', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { message_retention_hours: 24 });
    addChannel(db, 'a');
    addChannel(db, 'b');
    addChannel(db, 'mem', 'memory');
    const oldA = addMessages(db, 'a', 1_500, T0 - 25 * HOUR, (i) => `ancient alpha ${i}`);
    const oldB = addMessages(db, 'b', 1_000, T0 - 30 * HOUR, (i) => `ancient beta ${i}`);
    const oldMemory = addRevision(db, 'mem', 1, 1, T0 - 100 * HOUR, 'ancient memory');
    const newA = addMessages(db, 'a', 10, T0 - 23 * HOUR, (i) => `recent alpha ${i}`);

    const report = await maintenanceFor(db, config, clock).runTick();
    const step = report.steps.find((s) => s.name === 'retention');
    expect(step).toMatchObject({ rows: 2_500, cutShort: false });
    expect(step?.error).toBeUndefined();
    // Three delete chunks of at most 1,000 rows, each followed by FTS5 merge transactions (a GIN index has no segments to merge).
    expect(step!.transactions - step!.ftsMerges).toBe(3);
    if (db.capabilities.fullText === 'fts5') expect(step!.ftsMerges).toBeGreaterThanOrEqual(3);
    else expect(step!.ftsMerges).toBe(0);
    expect(report.deadlineReached).toBe(false);

    expect(evictedBefore(db, 'a')).toBe(Math.max(...oldA) + 1);
    expect(evictedBefore(db, 'b')).toBe(Math.max(...oldB) + 1);
    expect(evictedBefore(db, 'mem')).toBe(0);
    expect(db.all<{ seq: number }>("SELECT seq FROM messages WHERE channel = 'a' ORDER BY seq").map((r) => r.seq)).toEqual(newA);
    expect(count(db, "SELECT count(*) AS n FROM messages WHERE channel = 'b'")).toBe(0);
    // Memories are never age-evicted.
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE seq = ?', [oldMemory])).toBe(1);
    // The text index lost the evicted rows too.
    expect(indexHits(db, 'ancient')).toEqual([oldMemory]);
    expect(indexHits(db, 'recent')).toEqual(newA);
    indexIntegrity(db);
    db.close();
  });

  it('a second tick finds nothing more to evict and leaves boundaries where they are', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { message_retention_hours: 1 });
    addChannel(db, 'a');
    const old = addMessages(db, 'a', 5, T0 - 2 * HOUR);
    const maintenance = maintenanceFor(db, config, clock);
    await maintenance.runTick();
    const again = await maintenance.runTick();
    expect(again.steps.find((s) => s.name === 'retention')?.rows).toBe(0);
    expect(evictedBefore(db, 'a')).toBe(Math.max(...old) + 1);
    db.close();
  });
});
