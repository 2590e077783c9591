import { describe, expect, it } from 'vitest';
import { HOUR, indexHits, indexIntegrity, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { addChannel, addRevision, count } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('tick: tombstone purge', () => {
  it('purges revisions tombstoned longer than tombstone_min_hours, with their text index entries and embeddings', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { tombstone_min_hours: 72 });
    addChannel(db, 'mem', 'memory');
    const purged = addRevision(db, 'mem', 1, 1, T0 - 200 * HOUR, 'superseded zebra', T0 - 73 * HOUR);
    const young = addRevision(db, 'mem', 1, 2, T0 - 73 * HOUR, 'superseded yak', T0 - 71 * HOUR);
    const live = addRevision(db, 'mem', 1, 3, T0 - 71 * HOUR, 'current walrus');
    for (const seq of [purged, young, live]) {
      db.run("INSERT INTO embeddings (seq, model, vector) VALUES (?, 'm', ?)", [seq, new Uint8Array(16)]);
    }

    const report = await maintenanceFor(db, config, clock).runTick();
    const step = report.steps.find((s) => s.name === 'tombstones');
    expect(step?.rows).toBe(1);
    expect(step?.error).toBeUndefined();
    expect(db.all<{ seq: number }>('SELECT seq FROM messages ORDER BY seq').map((r) => r.seq)).toEqual([young, live]);
    expect(indexHits(db, 'zebra')).toEqual([]);
    expect(indexHits(db, 'yak')).toEqual([young]);
    expect(db.all<{ seq: number }>('SELECT seq FROM embeddings ORDER BY seq').map((r) => r.seq)).toEqual([young, live]);
    indexIntegrity(db);

    // Once old enough, the younger tombstone goes too; the live revision never does.
    clock.set(T0 + 2 * HOUR);
    await maintenanceFor(db, config, clock).runTick();
    expect(db.all<{ seq: number }>('SELECT seq FROM messages ORDER BY seq').map((r) => r.seq)).toEqual([live]);
    expect(count(db, 'SELECT count(*) AS n FROM embeddings')).toBe(1);
    expect(indexHits(db, 'walrus')).toEqual([live]);
    db.close();
  });
});
