import { describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import type { Database } from '../../src/db/contract/database.js';
import { ensureCapacity } from '../../src/bus/capacity-check.js';
import { capacityUsage } from '../../src/maintenance/capacity.js';
import { readCapacityNotice } from '../../src/maintenance/capacity-notice.js';
import { emptyStep } from '../../src/maintenance/step-report.js';
import { expectErrorSync } from '../support/expect-error.js';
import { fillPast, indexIntegrity, maintenanceFor, measuredBytes, T0, testDb } from '../support/maintenance.js';
import { addChannel, addMessages, addRevision, count, evictedBefore } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

// A budget far below the config file's minimum (64 MiB) keeps the test database small. Tests fill
// it by what the engine counts (fillPast): SQLite's live pages, PostgreSQL's summed message bytes.
const BUDGET_MIB = 1;
const BUDGET_BYTES = BUDGET_MIB * 1024 * 1024;

const words = (i: number, n: number) => Array.from({ length: n }, (_, j) => `w${(i * 31 + j * 17) % 997}`).join(' ');

/**
 * Live memories (ids 1, 2, ...) until their content alone exceeds the budget,
 * which every engine's measure counts at least (pages hold the content and
 * more; PostgreSQL sums it): no eviction or index merge can bring usage under
 * it. Returns how many.
 */
function fillMemories(db: Database): number {
  const contentBytes = () => count(db, 'SELECT COALESCE(sum(bytes), 0) AS n FROM messages WHERE memory_id IS NOT NULL');
  const batch = (added: number) =>
    db.transaction(() => {
      for (let i = added; i < added + 100; i++) addRevision(db, 'mem', i + 1, 1, T0, words(i, 80));
      return 100;
    });
  return fillPast(db, BUDGET_BYTES, batch, contentBytes);
}

/** Ordinary messages in channel `a` until usage exceeds the budget; returns their seqs, oldest first. */
function fillMessages(db: Database): number[] {
  const seqs: number[] = [];
  fillPast(db, BUDGET_BYTES, (added) => seqs.push(...addMessages(db, 'a', 250, T0, (i) => words(added + i, 60))));
  return seqs;
}

function seqs(db: Database, sql: string): number[] {
  return db.all<{ seq: number }>(sql).map((r) => r.seq);
}

describe('capacity', () => {
  it('the tick evicts ordinary messages oldest first until usage is below the budget less cleanup_free_percent', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { sqlite_budget_mib: BUDGET_MIB, cleanup_free_percent: 25 });
    addChannel(db, 'a');
    addChannel(db, 'mem', 'memory');
    const memory = addRevision(db, 'mem', 1, 1, T0 - 1, 'kept forever');
    const all = fillMessages(db);
    const before = capacityUsage(db, config);
    expect(before.budgetBytes).toBe(BUDGET_BYTES);
    expect(before.usedBytes).toBeGreaterThan(before.budgetBytes);
    expect(before.usedBytes).toBe(measuredBytes(db));

    const report = await maintenanceFor(db, config, new TestClock({ start: T0 })).runTick();
    const step = report.steps.find((s) => s.name === 'capacity');
    expect(step?.rows).toBeGreaterThan(0);
    expect(step?.error).toBeUndefined();
    const after = capacityUsage(db, config);
    expect(after.usedBytes).toBeLessThan(after.targetBytes);
    expect(after.usedBytes).toBe(measuredBytes(db));
    const vacuum = report.steps.find((s) => s.name === 'vacuum');
    // Freed pages sit on the freelist until vacuum; the tick's vacuum step returned some of them.
    if (db.capabilities.sizeOf === 'pages') expect(vacuum?.rows).toBeGreaterThan(0);
    // PostgreSQL's autovacuum keeps its relations: the tick has no vacuum step there.
    else expect(vacuum).toBeUndefined();

    const left = seqs(db, "SELECT seq FROM messages WHERE channel = 'a' ORDER BY seq");
    expect(left.length).toBeGreaterThan(0);
    // Oldest first: what survives is exactly the newest suffix, and the boundary sits at its start.
    expect(left).toEqual(all.slice(all.length - left.length));
    expect(evictedBefore(db, 'a')).toBe(left[0]);
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE seq = ?', [memory])).toBe(1);
    expect(report.capacityNotice).toBe(false);
    indexIntegrity(db);
    db.close();
  });

  it('ensureCapacity evicts inline so a write fits, and does nothing while under budget', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { sqlite_budget_mib: BUDGET_MIB });
    addChannel(db, 'a');
    addMessages(db, 'a', 100, T0, (i) => words(i, 60));
    const step = emptyStep('capacity');
    ensureCapacity(db, config, T0, 10_000, { report: step });
    expect(step.transactions).toBe(0);
    expect(count(db, 'SELECT count(*) AS n FROM messages')).toBe(100);

    fillMessages(db);
    ensureCapacity(db, config, T0, 10_000, { report: step });
    expect(step.rows).toBeGreaterThan(0);
    const usage = capacityUsage(db, config);
    expect(usage.usedBytes + 10_000).toBeLessThanOrEqual(usage.budgetBytes);
    const oldest = seqs(db, "SELECT seq FROM messages WHERE channel = 'a' ORDER BY seq LIMIT 1")[0];
    expect(evictedBefore(db, 'a')).toBe(oldest);
    expect(readCapacityNotice(db)).toBeUndefined();
    db.close();
  });

  it('capacity_exhausted when live memories fill the budget: ordinary messages go, memories stay, the notice is set and later cleared', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { sqlite_budget_mib: BUDGET_MIB });
    addChannel(db, 'a');
    addChannel(db, 'mem', 'memory');
    addMessages(db, 'a', 200, T0, (i) => words(i, 60));
    const memories = fillMemories(db);
    // A tombstone too young to purge is protected like a live memory.
    addRevision(db, 'mem', 99_999, 1, T0, 'young tombstone', T0 - 1);
    expect(capacityUsage(db, config).usedBytes).toBeGreaterThan(capacityUsage(db, config).budgetBytes);

    expectErrorSync(() => ensureCapacity(db, config, clock.now(), 5_000), BusError, 'capacity_exhausted');
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE memory_id IS NULL')).toBe(0);
    expect(count(db, 'SELECT count(*) AS n FROM messages WHERE memory_id IS NOT NULL')).toBe(memories + 1);
    const notice = readCapacityNotice(db);
    expect(notice?.message).toContain(config.configPath);
    expect(notice?.message).toContain(`${BUDGET_MIB} MiB`);
    expect(notice?.message).toContain('sqlite_budget_mib');
    expect(notice?.message).toContain('agentbus reset');

    // The tick keeps the notice while usage is still over budget.
    const maintenance = maintenanceFor(db, config, clock);
    expect((await maintenance.runTick()).capacityNotice).toBe(true);

    // Space is freed (memories deleted by hand here, all but a fifth); the next tick clears the notice.
    db.transaction(() => db.run('DELETE FROM messages WHERE memory_id > ?', [Math.floor(memories / 5)]));
    const report = await maintenance.runTick();
    expect(report.capacityNotice).toBe(false);
    expect(readCapacityNotice(db)).toBeUndefined();
    ensureCapacity(db, config, clock.now(), 5_000);
    indexIntegrity(db);
    db.close();
  });

  it('the tick sets the notice on its own when memories alone exceed the budget', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { sqlite_budget_mib: BUDGET_MIB });
    addChannel(db, 'mem', 'memory');
    const memories = fillMemories(db);
    const report = await maintenanceFor(db, config, new TestClock({ start: T0 })).runTick();
    expect(report.capacityNotice).toBe(true);
    expect(count(db, 'SELECT count(*) AS n FROM messages')).toBe(memories);
    db.close();
  });
});
