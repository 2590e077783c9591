import { describe, expect, it } from 'vitest';
import { acquireLease, readLease, releaseLease, type LeaseHolder } from '../../src/maintenance/lease.js';
import { runFixture } from '../support/child-process.js';
import { deadProcess } from '../support/process-identities.js';
import { openTestDatabase, testDriverEnv } from '../support/test-driver.js';
import { HOUR, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

const TTL = 120_000;

describe('maintenance lease', () => {
  it('only one owner holds it until it expires on the monotonic clock; the holder renews it', async () => {
    const { db } = await testDb();
    const clock = new TestClock({ start: T0 });
    const a: LeaseHolder = { owner: 'a', process: undefined, clock };
    const b: LeaseHolder = { owner: 'b', process: undefined, clock };
    expect(acquireLease(db, a, TTL)).toBe(true);
    clock.advance(1_000);
    expect(acquireLease(db, b, TTL)).toBe(false);
    clock.advance(59_000);
    expect(acquireLease(db, a, TTL)).toBe(true);
    expect(readLease(db)).toEqual({ owner: 'a', expiresAt: T0 + 60_000 + TTL });
    // Still held at the renewed expiry, free just after it.
    clock.advance(TTL);
    expect(acquireLease(db, b, TTL)).toBe(false);
    clock.advance(1);
    expect(acquireLease(db, b, TTL)).toBe(true);
    expect(readLease(db)?.owner).toBe('b');
    db.close();
  });

  it('a wall-clock jump neither frees a live holder\'s lease nor keeps a stopped one\'s', async () => {
    const { db } = await testDb();
    const clock = new TestClock({ start: T0 });
    const a: LeaseHolder = { owner: 'a', process: undefined, clock };
    const b: LeaseHolder = { owner: 'b', process: undefined, clock };
    expect(acquireLease(db, a, TTL)).toBe(true);
    clock.jump(2 * HOUR);
    expect(acquireLease(db, b, TTL)).toBe(false);
    // Set back past the start: a stopped holder still loses the lease after its TTL.
    clock.jump(-4 * HOUR);
    clock.advance(TTL + 1);
    expect(acquireLease(db, b, TTL)).toBe(true);
    db.close();
  });

  it('a holder that is certainly dead loses it at once; one on a clock this process cannot read keeps it to the wall-clock expiry', async () => {
    const { db } = await testDb();
    const clock = new TestClock({ start: T0 });
    expect(acquireLease(db, { owner: 'crashed', process: await deadProcess(), clock }, TTL)).toBe(true);
    expect(acquireLease(db, { owner: 'next', process: undefined, clock }, TTL)).toBe(true);

    const elsewhere = new TestClock({ start: T0 });
    expect(acquireLease(db, { owner: 'elsewhere', process: undefined, clock: elsewhere }, TTL)).toBe(false);
    clock.advance(TTL + 1);
    // `next` stopped renewing; a process on another monotonic clock can only go by the wall clock.
    expect(acquireLease(db, { owner: 'elsewhere', process: undefined, clock: elsewhere }, TTL)).toBe(false);
    elsewhere.set(T0 + TTL + 1);
    expect(acquireLease(db, { owner: 'elsewhere', process: undefined, clock: elsewhere }, TTL)).toBe(true);
    db.close();
  });

  it('a released lease is free at once, and only its holder can release it', async () => {
    const { db } = await testDb();
    const clock = new TestClock({ start: T0 });
    const a: LeaseHolder = { owner: 'a', process: undefined, clock };
    const b: LeaseHolder = { owner: 'b', process: undefined, clock };
    expect(acquireLease(db, a, TTL)).toBe(true);
    expect(releaseLease(db, 'b')).toBe(false);
    expect(acquireLease(db, b, TTL)).toBe(false);
    expect(releaseLease(db, 'a')).toBe(true);
    expect(acquireLease(db, b, TTL)).toBe(true);
    db.close();
  });

  it('a tick without the lease does nothing; stop() releases it for the next process', async () => {
    const { db, dir } = await testDb();
    const config = testConfig(dir, { cleanup_interval_seconds: 60 });
    const clock = new TestClock({ start: T0 });
    const first = maintenanceFor(db, config, clock, { owner: 'first' });
    const second = maintenanceFor(db, config, clock, { owner: 'second' });
    expect((await first.runTick()).leased).toBe(true);
    const refused = await second.runTick();
    expect(refused).toMatchObject({ leased: false, steps: [] });
    // The lease lasts two intervals.
    expect(readLease(db)).toEqual({ owner: 'first', expiresAt: T0 + 120_000 });
    await first.stop();
    expect((await second.runTick()).leased).toBe(true);
    await second.stop();
    db.close();
  });

  it('start() is idempotent, ticks never overlap, and stop() waits for the tick and releases the lease', async () => {
    const { db, dir } = await testDb();
    const maintenance = maintenanceFor(db, testConfig(dir), new TestClock({ start: T0 }), { owner: 'me' });
    maintenance.start();
    maintenance.start();
    const first = maintenance.runTick();
    const second = maintenance.runTick();
    expect(second).toBe(first);
    await maintenance.stop();
    expect((await first).leased).toBe(true);
    expect(readLease(db)).toEqual({ owner: '', expiresAt: 0 });
    await maintenance.stop();
    db.close();
  });

  it('four OS processes racing for it: exactly one ever wins', async () => {
    const { db, dir } = await testDb();
    db.close();
    const results = await Promise.all(
      [0, 1, 2, 3].map(() => runFixture('lease-child.js', ['race', dir, '50', '600000'], testDriverEnv(dir), 120_000)),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const outcomes = results.map((r) => JSON.parse(r.stdout.trim()) as { owner: string; wins: number });
    const winners = outcomes.filter((o) => o.wins > 0);
    expect(winners).toHaveLength(1);
    // The winner renews on every later attempt.
    expect(winners[0]?.wins).toBeGreaterThan(0);
    const { db: check } = await openTestDatabase(dir);
    expect(readLease(check)?.owner).toBe(winners[0]?.owner);
    check.close();
  });
});
