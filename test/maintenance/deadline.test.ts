import { describe, expect, it } from 'vitest';
import { HOUR, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, count, evictedBefore } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('tick deadline', () => {
  it('stops at half the interval and the next tick resumes where it left off', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { message_retention_hours: 1, cleanup_interval_seconds: 60 });
    addChannel(db, 'a');
    const old = addMessages(db, 'a', 3_500, T0 - 2 * HOUR);
    const remaining = () => count(db, 'SELECT count(*) AS n FROM messages WHERE created_at < ?', [T0 - HOUR]);
    // A wall clock that jumps past the deadline (30 s) as soon as the first chunk has been evicted.
    const timer = () => (remaining() < old.length ? 31_000 : 0);
    const embeddingDeadlines: number[] = [];
    const steps = { embeddingPass: async (deadline: number) => void embeddingDeadlines.push(deadline) };

    const first = await maintenanceFor(db, config, clock, { timer, steps }).runTick();
    expect(first.deadlineReached).toBe(true);
    const retention = first.steps.find((s) => s.name === 'retention');
    expect(retention).toMatchObject({ rows: 1_000, transactions: 1, cutShort: true, skipped: false });
    // Every later step is skipped: tombstones, capacity, the engine's own (SQLite's fts_merge and vacuum), embeddings.
    const later = first.steps.slice(first.steps.indexOf(retention!) + 1);
    expect(later.map((s) => s.name)).toEqual(expect.arrayContaining(['tombstones', 'capacity', 'embeddings']));
    for (const step of later) expect(step, step.name).toMatchObject({ skipped: true, rows: 0 });
    expect(embeddingDeadlines).toEqual([]);
    expect(remaining()).toBe(2_500);
    // The boundary covers exactly what is gone so far.
    expect(evictedBefore(db, 'a')).toBe((old[999] ?? 0) + 1);

    const second = await maintenanceFor(db, config, clock, { steps }).runTick();
    expect(second.deadlineReached).toBe(false);
    expect(second.steps.find((s) => s.name === 'retention')).toMatchObject({ rows: 2_500, cutShort: false });
    expect(remaining()).toBe(0);
    expect(evictedBefore(db, 'a')).toBe(Math.max(...old) + 1);
    expect(embeddingDeadlines).toHaveLength(1);
    db.close();
  });

  it('a failing embedding pass is reported and does not fail the tick', async () => {
    const { db, dir } = await testDb();
    const steps = {
      embeddingPass: async () => {
        throw new Error('endpoint down');
      },
    };
    const report = await maintenanceFor(db, testConfig(dir), new TestClock({ start: T0 }), { steps }).runTick();
    expect(report.steps.find((s) => s.name === 'embeddings')?.error).toContain('endpoint down');
    db.close();
  });
});
