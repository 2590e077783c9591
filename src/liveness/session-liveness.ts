/**
 * Whether the process holding a display name still runs, judged so that a
 * wall-clock jump never hands a live holder's name to someone else and a dead
 * holder does not keep its name for long. The first rule that applies decides:
 *
 * 1. The row names its owning process and this process can judge it (same
 *    kernel boot and pid namespace, src/db/processes/process-identity.ts): dead means
 *    the name is free at once; alive means it is held, however old its
 *    heartbeat (a stopped or busy process keeps its name).
 * 2. The holder's last heartbeat carries a reading of a monotonic clock this
 *    process reads too (same boot and time namespace: another container on
 *    this kernel): held while that reading is within SESSION_EXPIRY_MS of ours.
 * 3. Otherwise (another machine, a row of an older agentbus, no monotonic
 *    domain): the heartbeat value is a lease watched on our own monotonic
 *    clock. (A row an older agentbus took over lands here too: sql/0009's
 *    trigger clears the columns of rules 1 and 2 when `owner` changes
 *    without them, so a live older holder is never judged by the previous,
 *    dead one's process.) It is held until the value has stayed the same for
 *    SESSION_EXPIRY_MS since a process of our clock scope first saw it; the
 *    first sighting is recorded in `session_sightings`, so every process of
 *    the scope shares it. A value never seen before counts as held: when in
 *    doubt the newcomer gets a suffixed name rather than a live one's.
 *
 * The wall-clock heartbeat is never compared with the wall clock: any change
 * of it proves a beat, whichever way the clock went.
 */
import { monotonicScope, type Clock } from '../clock.js';
import type { Database } from '../db/contract/database.js';
import { formatProcessIdentity, judgeProcess, parseProcessIdentity, type ProcessIdentity } from '../db/processes/process-identity.js';

/** How often a process refreshes its sessions (the caller runs the timer). */
export const HEARTBEAT_INTERVAL_MS = 10_000;
/** A holder whose heartbeat has not moved for this long on a monotonic clock has stopped. */
export const SESSION_EXPIRY_MS = 30_000;

/** The columns of a session row that say who holds it; select them with HOLDER_COLUMNS. */
export interface SessionHolder {
  /** The display name. */
  readonly sender: string;
  /** The holding process's random owner token. */
  readonly owner: string;
  /** The holder's wall clock at its last beat, ms; only its changes are trusted. */
  readonly heartbeat: number;
  /** formatProcessIdentity of the holder; null on rows of an older agentbus or a process that could not tell. */
  readonly owner_process: string | null;
  /** The holder's monotonic scope (see monotonicScope) at its last beat; null on older rows. */
  readonly clock_domain: string | null;
  /** The holder's monotonic clock at its last beat, ms; null on older rows. */
  readonly heartbeat_mono: number | null;
}

/** The SELECT list that fills a SessionHolder. */
export const HOLDER_COLUMNS = 'sender, owner, heartbeat, owner_process, clock_domain, heartbeat_mono';

/** Who is judging: its clock and the scope its monotonic readings compare in. */
export interface Observer {
  /** The observer's clock. */
  readonly clock: Clock;
  /** monotonicScope(clock, owner token) of the observer. */
  readonly scope: string;
}

/** The observer for a process with `clock` and owner token `owner`. */
export function observer(clock: Clock, owner: string): Observer {
  return { clock, scope: monotonicScope(clock, owner) };
}

/** Why a verdict was reached, for logs and tests. */
export type HolderReason = 'owner_alive' | 'owner_dead' | 'heartbeat_fresh' | 'heartbeat_stopped' | 'first_sighting' | 'sighting_fresh' | 'sighting_stopped';

export interface HolderVerdict {
  /** True while the name must be treated as taken. */
  readonly held: boolean;
  /** Which rule decided (see the file header). */
  readonly reason: HolderReason;
}

/**
 * Judges `row`'s holder (rules in the header). With `record`, a first
 * sighting is written (the caller must be in a write transaction); without
 * it nothing is written and an unrecorded value simply counts as held.
 */
export function judgeHolder(db: Database, by: Observer, row: SessionHolder, options: { readonly record: boolean }): HolderVerdict {
  const identity = row.owner_process === null ? undefined : parseProcessIdentity(row.owner_process);
  if (identity !== undefined) {
    const liveness = judgeProcess(identity);
    if (liveness === 'dead') return { held: false, reason: 'owner_dead' };
    if (liveness === 'alive') return { held: true, reason: 'owner_alive' };
  }
  const mono = by.clock.monotonic();
  if (row.clock_domain !== null && row.clock_domain === by.scope && row.heartbeat_mono !== null) {
    return mono - row.heartbeat_mono < SESSION_EXPIRY_MS ? { held: true, reason: 'heartbeat_fresh' } : { held: false, reason: 'heartbeat_stopped' };
  }
  const seen = db.get<{ owner: string; heartbeat: number; seen_mono: number }>(
    'SELECT owner, heartbeat, seen_mono FROM session_sightings WHERE sender = ? AND clock_domain = ?',
    [row.sender, by.scope],
  );
  if (seen !== undefined && seen.owner === row.owner && seen.heartbeat === row.heartbeat) {
    return mono - seen.seen_mono < SESSION_EXPIRY_MS ? { held: true, reason: 'sighting_fresh' } : { held: false, reason: 'sighting_stopped' };
  }
  if (options.record) {
    db.run(
      `INSERT INTO session_sightings (sender, clock_domain, owner, heartbeat, seen_mono) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (sender, clock_domain) DO UPDATE SET owner = excluded.owner, heartbeat = excluded.heartbeat, seen_mono = excluded.seen_mono`,
      [row.sender, by.scope, row.owner, row.heartbeat, mono],
    );
  }
  return { held: true, reason: 'first_sighting' };
}

/** The values a holder writes at each beat, in the order of BEAT_ASSIGNMENTS. */
export function beatValues(clock: Clock, owner: string, process: ProcessIdentity | undefined): [number, string | null, string, number] {
  return [clock.now(), process === undefined ? null : formatProcessIdentity(process), monotonicScope(clock, owner), clock.monotonic()];
}

/** SET clause matching beatValues. */
export const BEAT_ASSIGNMENTS = 'heartbeat = ?, owner_process = ?, clock_domain = ?, heartbeat_mono = ?';

/** Forgets what observers saw of `sender`'s holders; call when the row is deleted or taken over. */
export function forgetSightings(db: Database, sender: string): void {
  db.run('DELETE FROM session_sightings WHERE sender = ?', [sender]);
}
