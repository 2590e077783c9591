import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { capacityUsage } from '../../src/maintenance/capacity.js';
import { startFixture, waitForExit, waitForLine } from '../support/child-process.js';
import { databaseIntegrity, HOUR, maintenanceFor, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, count, evictedBefore } from '../support/rows.js';
import { testConfig } from '../support/test-config.js';
import { testDriverEnv } from '../support/test-driver.js';

const WRITER = 'writer-child.js';

async function finish(child: ReturnType<typeof startFixture>): Promise<number[]> {
  const result = await waitForExit(child, 120_000);
  expect(result.code, result.stderr).toBe(0);
  const last = result.stdout.trim().split('\n').at(-1) ?? '{}';
  return (JSON.parse(last) as { seqs: number[] }).seqs;
}

describe('maintenance while another process sends', () => {
  it('age eviction in chunks loses no new message and leaves an exact gap boundary', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { message_retention_hours: 1 });
    addChannel(db, 'a');
    const old = addMessages(db, 'a', 5_000, Date.now() - 2 * HOUR, (i) => `old message ${i}`);
    const child = startFixture(WRITER, ['write', dir, 'a', '300'], testDriverEnv(dir));
    await waitForLine(child, 'started');

    const report = await maintenanceFor(db, config, systemClock, { lockTargetMs: undefined }).runTick();
    const sent = await finish(child);

    const step = report.steps.find((s) => s.name === 'retention');
    expect(step?.rows).toBe(5_000);
    expect(step?.transactions).toBeGreaterThanOrEqual(5);
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE seq <= ?', [Math.max(...old)])).toBe(0);
    expect(db.all<{ seq: number }>("SELECT seq FROM messages WHERE channel = 'a' ORDER BY seq").map((r) => r.seq)).toEqual(sent);
    expect(evictedBefore(db, 'a')).toBe(Math.max(...old) + 1);
    databaseIntegrity(db);
    db.close();
  });

  it('capacity eviction under concurrent sends gets under target and keeps every survivor in order', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { sqlite_budget_mib: 1 });
    addChannel(db, 'a');
    addMessages(db, 'a', 4_000, Date.now(), (i) => Array.from({ length: 60 }, (_, j) => `w${(i * 31 + j * 17) % 997}`).join(' '));
    const child = startFixture(WRITER, ['write', dir, 'a', '300'], testDriverEnv(dir));
    await waitForLine(child, 'started');

    const report = await maintenanceFor(db, config, systemClock, { lockTargetMs: undefined }).runTick();
    const sent = await finish(child);

    expect(report.steps.find((s) => s.name === 'capacity')?.rows).toBeGreaterThan(0);
    const left = db.all<{ seq: number }>("SELECT seq FROM messages WHERE channel = 'a' ORDER BY seq").map((r) => r.seq);
    // Everything below the boundary is gone, everything from it on survives.
    expect(left[0]).toBe(evictedBefore(db, 'a'));
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE seq >= ?', [evictedBefore(db, 'a')])).toBe(left.length);
    // The concurrent writer's messages are the newest: eviction reached none of them.
    for (const seq of sent) expect(left).toContain(seq);
    const usage = capacityUsage(db, config);
    expect(usage.usedBytes).toBeLessThan(usage.budgetBytes);
    databaseIntegrity(db);
    db.close();
  });
});
