/**
 * Rows an older agentbus writes beside this one (sql/0009): its takeovers
 * write `owner` and the wall-clock columns only. The statements below are the
 * ones agentbus at schema 6 runs (src/bus/identity.ts, src/bus/reservations.ts,
 * src/maintenance/lease.ts of that release), run as it runs them.
 */
import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { register, requireSession } from '../../src/bus/identity.js';
import { deleteDeadReservations, liveReservations } from '../../src/liveness/reservations-live.js';
import { judgeHolder, observer, HOLDER_COLUMNS, type SessionHolder } from '../../src/liveness/session-liveness.js';
import type { Database } from '../../src/db/contract/database.js';
import { currentProcess, type ProcessIdentity } from '../../src/db/processes/process-identity.js';
import { createMemoryLogger } from '../../src/log.js';
import { acquireLease, readLease } from '../../src/maintenance/lease.js';
import { deadProcess } from '../support/process-identities.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

const OLD_TAKEOVER = 'UPDATE sessions SET context = ?, owner = ?, heartbeat = ?, registered_at = ? WHERE sender = ?';
const OLD_HEARTBEAT = 'UPDATE sessions SET heartbeat = ? WHERE owner = ?';
const OLD_RESERVE = `INSERT INTO reservations (repository, pattern, holder, owner, exclusive, reason, reserved_at, expires_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (repository, holder, pattern) DO UPDATE SET
    owner = excluded.owner, exclusive = excluded.exclusive, reason = excluded.reason,
    reserved_at = excluded.reserved_at, expires_at = excluded.expires_at`;
const OLD_LEASE = "UPDATE leases SET owner = ?, expires_at = ? WHERE name = 'maintenance' AND (expires_at < ? OR owner = ?)";

async function fixture(): Promise<{ db: Database; clock: TestClock; ctx: (owner: string, process?: ProcessIdentity) => BusContext }> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  const clock = new TestClock();
  const ctx = (owner: string, process: ProcessIdentity | undefined = currentProcess()): BusContext => ({
    db,
    config: testConfig(dir),
    clock,
    log: createMemoryLogger(),
    owner,
    processIdentity: process,
    defaultContext: 'repo',
  });
  return { db, clock, ctx };
}

function holder(db: Database, sender: string): SessionHolder {
  return db.get<SessionHolder>(`SELECT ${HOLDER_COLUMNS} FROM sessions WHERE sender = ?`, [sender])!;
}

describe('a takeover by an older agentbus never makes its live holder look dead', () => {
  it('a name it took over from a dead newer holder is judged by its heartbeat, not by the dead process', async () => {
    const { db, clock, ctx } = await fixture();
    const dead = await deadProcess();
    expect(register(ctx('crashed', dead), { name: 'Sam' }).display_name).toBe('Sam');
    clock.advance(31_000);
    db.transaction(() => db.run(OLD_TAKEOVER, ['repo', 'old-agent', clock.now(), clock.now(), 'Sam']));
    expect(holder(db, 'Sam')).toMatchObject({ owner: 'old-agent', owner_process: null, clock_domain: null, heartbeat_mono: null });

    const other = ctx('newer');
    expect(register(other, { name: 'Sam' }).display_name).toBe('Sam2');
    // The old agent beats (its wall clock moves): held however long it runs.
    for (let i = 0; i < 6; i++) {
      clock.advance(10_000);
      db.transaction(() => db.run(OLD_HEARTBEAT, [clock.now(), 'old-agent']));
      expect(judgeHolder(db, observer(clock, 'newer'), holder(db, 'Sam'), { record: true })).toMatchObject({ held: true });
    }
    // It stops beating: 30 s after its value was first seen unchanged, the name is free.
    clock.advance(30_000);
    expect(db.transaction(() => judgeHolder(db, observer(clock, 'newer'), holder(db, 'Sam'), { record: true }))).toEqual({ held: false, reason: 'sighting_stopped' });
    db.close();
  });

  it('the reverse: a newer agent taking over an older one\'s name writes its own identity, which the trigger leaves alone', async () => {
    const { db, clock, ctx } = await fixture();
    db.transaction(() => db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES ('Sam', 'repo', 'old-agent', ?, ?)", [clock.now(), clock.now()]));
    const newer = ctx('newer');
    expect(register(newer, { name: 'Sam' }).display_name).toBe('Sam2');
    clock.advance(31_000);
    const again = ctx('again');
    expect(register(again, { name: 'Sam' }).display_name).toBe('Sam');
    expect(requireSession(again, 'Sam').sender).toBe('Sam');
    expect(holder(db, 'Sam')).toMatchObject({ owner: 'again', clock_domain: clock.monotonicDomain, heartbeat_mono: clock.mono });
    expect(holder(db, 'Sam').owner_process).not.toBeNull();
    db.close();
  });

  it('a reservation it renewed over a dead holder\'s row ends by its wall-clock expiry, not the dead maker\'s monotonic one', async () => {
    const { db, clock, ctx } = await fixture();
    const view = { clock, owner: 'newer' };
    db.transaction(() => {
      db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES ('Sam', 'repo', 'old-agent', ?, ?)", [clock.now(), clock.now()]);
      // The dead holder's claim, made on this clock, expired on it a minute ago.
      db.run(
        "INSERT INTO reservations (repository, pattern, holder, owner, exclusive, reason, reserved_at, expires_at, clock_domain, expires_mono) VALUES ('/r', 'src/owned.ts', 'Sam', 'crashed', 1, NULL, ?, ?, ?, ?)",
        [clock.now() - 120_000, clock.now() - 60_000, clock.monotonicDomain!, clock.mono - 60_000],
      );
      db.run(OLD_RESERVE, ['/r', 'src/owned.ts', 'Sam', 'old-agent', 1, 'old agent edits it', clock.now(), clock.now() + 3_600_000]);
    });
    expect(db.get("SELECT owner, clock_domain, expires_mono FROM reservations WHERE pattern = 'src/owned.ts'")).toEqual({ owner: 'old-agent', clock_domain: null, expires_mono: null });
    const live = db.read(() => liveReservations(db, view));
    expect(live.map((r) => [r.holder, r.pattern])).toEqual([['Sam', 'src/owned.ts']]);
    expect(db.transaction(() => deleteDeadReservations(db, view, 100))).toBe(0);
    db.close();
  });

  it('the lease it took over from a dead newer holder is its own until its wall-clock expiry', async () => {
    const { db, clock } = await fixture();
    const dead = await deadProcess();
    expect(acquireLease(db, { owner: 'crashed', process: dead, clock }, 60_000)).toBe(true);
    clock.advance(61_000);
    db.transaction(() => db.run(OLD_LEASE, ['old-agent', clock.now() + 60_000, clock.now(), 'old-agent']));
    expect(db.get("SELECT owner, owner_process, clock_domain, expires_mono FROM leases WHERE name = 'maintenance'")).toEqual({
      owner: 'old-agent',
      owner_process: null,
      clock_domain: null,
      expires_mono: null,
    });
    const newer = { owner: 'newer', process: currentProcess(), clock };
    expect(acquireLease(db, newer, 60_000)).toBe(false);
    clock.advance(59_000);
    expect(acquireLease(db, newer, 60_000)).toBe(false);
    clock.advance(2_000);
    expect(acquireLease(db, newer, 60_000)).toBe(true);
    expect(readLease(db)?.owner).toBe('newer');
    expect(db.get("SELECT owner_process IS NOT NULL AS has_process, expires_mono FROM leases WHERE name = 'maintenance'")).toEqual({ has_process: 1, expires_mono: clock.mono + 60_000 });
    db.close();
  });
});
