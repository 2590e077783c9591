import { describe, expect, it } from 'vitest';
import { addChannel, count, HOUR, maintenanceFor, T0, testClock, testConfig, testDb } from './helpers.js';

describe('tick: stale sessions, expired receipts, idle subscriptions', () => {
  it('deletes sessions whose heartbeat is older than 30 s and keeps live ones', async () => {
    const { db, dir } = await testDb();
    const clock = testClock();
    const add = (sender: string, heartbeat: number) =>
      db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES (?, 'c', 'o', ?, ?)", [sender, heartbeat, T0 - HOUR]);
    add('dead', T0 - 31_000);
    add('alive', T0 - 5_000);
    const report = await maintenanceFor(db, testConfig(dir), clock).runTick();
    expect(report.leased).toBe(true);
    expect(report.steps.find((s) => s.name === 'stale_sessions')?.rows).toBe(1);
    expect(db.all('SELECT sender FROM sessions')).toEqual([{ sender: 'alive' }]);
    db.close();
  });

  it('deletes receipts past expires_at and keeps unexpired ones', async () => {
    const { db, dir } = await testDb();
    const clock = testClock();
    const add = (key: string, expiresAt: number) =>
      db.run("INSERT INTO receipts (sender, key, fingerprint, result, expires_at) VALUES ('alice', ?, 'f', '{}', ?)", [key, expiresAt]);
    add('old', T0 - 1);
    add('fresh', T0 + 60_000);
    const report = await maintenanceFor(db, testConfig(dir), clock).runTick();
    expect(report.steps.find((s) => s.name === 'expired_receipts')?.rows).toBe(1);
    expect(db.all('SELECT key FROM receipts')).toEqual([{ key: 'fresh' }]);
    db.close();
  });

  it('deletes subscriptions idle past cursor_idle_hours, with their pending batch', async () => {
    const { db, dir } = await testDb();
    const clock = testClock();
    const config = testConfig(dir, { cursor_idle_hours: 72 });
    addChannel(db, 'chat');
    db.run(
      "INSERT INTO subscriptions (sender, channel, cursor_seq, last_activity, pending_token, pending_end_seq) VALUES ('idle', 'chat', 0, ?, 'tok', 5)",
      [T0 - 73 * HOUR],
    );
    db.run("INSERT INTO subscriptions (sender, channel, cursor_seq, last_activity) VALUES ('active', 'chat', 0, ?)", [T0 - 71 * HOUR]);
    const report = await maintenanceFor(db, config, clock).runTick();
    expect(report.steps.find((s) => s.name === 'idle_subscriptions')?.rows).toBe(1);
    expect(db.all('SELECT sender FROM subscriptions')).toEqual([{ sender: 'active' }]);
    expect(count(db, "SELECT count(*) AS n FROM subscriptions WHERE pending_token = 'tok'")).toBe(0);
    // The marker that lets idle's next receive say "expired".
    expect(db.all('SELECT sender, channel, expired_at FROM expired_subscriptions')).toEqual([{ sender: 'idle', channel: 'chat', expired_at: T0 }]);

    // Nobody consumed it within another cursor_idle_hours: the tick purges it (and expires 'active' by now).
    const later = T0 + 72 * HOUR + 1;
    clock.set(later);
    const report2 = await maintenanceFor(db, config, clock).runTick();
    expect(report2.steps.find((s) => s.name === 'idle_subscriptions')?.rows).toBe(2);
    expect(db.all('SELECT sender, channel, expired_at FROM expired_subscriptions')).toEqual([{ sender: 'active', channel: 'chat', expired_at: later }]);
    db.close();
  });

  it('deletes more than 1,000 stale rows in chunks of at most 1,000', async () => {
    const { db, dir } = await testDb();
    const clock = testClock();
    db.transaction(() => {
      for (let i = 0; i < 2_100; i++) {
        db.run("INSERT INTO receipts (sender, key, fingerprint, result, expires_at) VALUES ('alice', ?, 'f', '{}', ?)", [`k${i}`, T0 - 1]);
      }
    });
    const report = await maintenanceFor(db, testConfig(dir), clock).runTick();
    const step = report.steps.find((s) => s.name === 'expired_receipts');
    expect(step).toMatchObject({ rows: 2_100, transactions: 3, cutShort: false });
    expect(count(db, 'SELECT count(*) AS n FROM receipts')).toBe(0);
    db.close();
  });
});
