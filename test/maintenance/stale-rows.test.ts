import { describe, expect, it } from 'vitest';
import { currentProcess, formatProcessIdentity } from '../../src/db/processes/process-identity.js';
import { deadProcess, foreignProcess } from '../support/process-identities.js';
import { HOUR, maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { addChannel, count } from '../support/rows.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('tick: stale sessions, expired receipts, idle subscriptions', () => {
  it('deletes sessions whose holder stopped: a dead owner at once, others when their heartbeat stops, never by the wall clock', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const session = (sender: string, columns: { owner_process?: string; clock_domain?: string; heartbeat_mono?: number; heartbeat?: number }) =>
      db.run(
        "INSERT INTO sessions (sender, context, owner, heartbeat, registered_at, owner_process, clock_domain, heartbeat_mono) VALUES (?, 'c', ?, ?, ?, ?, ?, ?)",
        [sender, `owner-${sender}`, columns.heartbeat ?? T0, T0 - HOUR, columns.owner_process ?? null, columns.clock_domain ?? null, columns.heartbeat_mono ?? null],
      );
    const domain = clock.monotonicDomain!;
    session('crashed', { owner_process: formatProcessIdentity(await deadProcess()), clock_domain: domain, heartbeat_mono: clock.mono });
    session('running', { owner_process: formatProcessIdentity(currentProcess()), clock_domain: domain, heartbeat_mono: clock.mono - HOUR, heartbeat: T0 - HOUR });
    session('stopped', { owner_process: formatProcessIdentity(foreignProcess()), clock_domain: domain, heartbeat_mono: clock.mono - 30_000 });
    session('beating', { owner_process: formatProcessIdentity(foreignProcess()), clock_domain: domain, heartbeat_mono: clock.mono - 29_999 });
    // Rows of an older agentbus, or of a holder on a clock this one cannot read: their wall-clock heartbeat is old, which proves nothing.
    session('legacy-stopped', { heartbeat: T0 - HOUR });
    session('legacy-beating', { heartbeat: T0 - HOUR });
    const tick = () => maintenanceFor(db, testConfig(dir), clock).runTick();
    const stepRows = async () => (await tick()).steps.find((s) => s.name === 'stale_sessions')?.rows;

    expect(await stepRows()).toBe(2);
    const senders = () => db.all<{ sender: string }>('SELECT sender FROM sessions ORDER BY sender').map((r) => r.sender);
    expect(senders()).toEqual(['beating', 'legacy-beating', 'legacy-stopped', 'running']);

    // The wall clock is set back and forth: nothing changes.
    clock.jump(-2 * HOUR);
    expect(await stepRows()).toBe(0);
    clock.jump(4 * HOUR);
    expect(await stepRows()).toBe(0);

    clock.advance(30_000);
    db.run("UPDATE sessions SET heartbeat = heartbeat + 10000 WHERE sender = 'legacy-beating'");
    expect(await stepRows()).toBe(2);
    expect(senders()).toEqual(['legacy-beating', 'running']);
    // What the tick saw of the deleted rows is gone with them.
    expect(db.all('SELECT sender FROM session_sightings ORDER BY sender')).toEqual([{ sender: 'legacy-beating' }]);
    db.close();
  });

  it('deletes receipts older than the retention on the monotonic clock, whatever the wall clock says, and adopts receipts of other clocks', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
    const config = testConfig(dir, { receipt_retention_minutes: 60 });
    const receipt = (key: string, domain: string | null, createdMono: number | null) =>
      db.run("INSERT INTO receipts (sender, key, fingerprint, result, expires_at, clock_domain, created_mono) VALUES ('alice', ?, 'f', '{}', ?, ?, ?)", [
        key,
        T0 - HOUR,
        domain,
        createdMono,
      ]);
    receipt('old', clock.monotonicDomain!, clock.mono - HOUR);
    receipt('fresh', clock.monotonicDomain!, clock.mono - HOUR + 1);
    receipt('legacy', null, null);
    receipt('other-boot', 'another-boot.t1', 1);
    const keys = () => db.all<{ key: string }>('SELECT key FROM receipts ORDER BY key').map((r) => r.key);
    const stepRows = async () => (await maintenanceFor(db, config, clock).runTick()).steps.find((s) => s.name === 'expired_receipts')?.rows;

    clock.jump(3 * HOUR);
    // One deleted, two adopted: their age starts now on this clock.
    expect(await stepRows()).toBe(3);
    expect(keys()).toEqual(['fresh', 'legacy', 'other-boot']);
    clock.advance(1);
    expect(await stepRows()).toBe(1);
    expect(keys()).toEqual(['legacy', 'other-boot']);
    clock.jump(-5 * HOUR);
    clock.advance(HOUR - 2);
    expect(await stepRows()).toBe(0);
    clock.advance(1);
    expect(await stepRows()).toBe(2);
    expect(keys()).toEqual([]);
    db.close();
  });

  it('deletes subscriptions idle past cursor_idle_hours, with their pending batch', async () => {
    const { db, dir } = await testDb();
    const clock = new TestClock({ start: T0 });
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
    const clock = new TestClock({ start: T0 });
    db.transaction(() => {
      for (let i = 0; i < 2_100; i++) {
        db.run("INSERT INTO receipts (sender, key, fingerprint, result, expires_at, clock_domain, created_mono) VALUES ('alice', ?, 'f', '{}', ?, ?, ?)", [
          `k${i}`,
          T0 - 1,
          clock.monotonicDomain!,
          clock.mono - 2 * HOUR,
        ]);
      }
    });
    const report = await maintenanceFor(db, testConfig(dir), clock).runTick();
    const step = report.steps.find((s) => s.name === 'expired_receipts');
    expect(step).toMatchObject({ rows: 2_100, transactions: 3, cutShort: false });
    expect(count(db, 'SELECT count(*) AS n FROM receipts')).toBe(0);
    db.close();
  });
});
