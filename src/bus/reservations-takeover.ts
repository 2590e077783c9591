/**
 * Taking over a stalled holder's reservations (reserve with `take_over`).
 *
 * A reservation ends with its holder's session, but a holder whose process
 * still runs and cannot be judged dead (session-liveness.ts, rule 1) keeps
 * its claims until they expire, up to 24 h, even when it has stopped making
 * any progress: a process stopped (SIGSTOP, a suspended terminal), an event
 * loop hung in a loop or on a lock. Such a holder is *stalled*: its heartbeat,
 * which its server's timer moves every 10 s whenever the process runs at all,
 * has not moved for TAKEOVER_STALL_MS. No tool call can be served by a process
 * whose heartbeat timer does not run (a reserve or any call needs the same
 * event loop), so a stalled heartbeat also means no tool call for that long;
 * a live holder's heartbeat moves every 10 s, so an active holder can never
 * be stalled. Idle is not stalled: an agent that is alive but quiet (its model
 * thinking, its person away) keeps its claims.
 *
 * The heartbeat's age is measured on a monotonic clock only: the holder's
 * own reading when the asker reads the same clock, else how long the asker's
 * scope has seen the same value (session_sightings). When neither can be
 * told, the holder is not stalled: a takeover is refused when in doubt.
 *
 * The holder is told in its next receive (a `reservation_taken` notice), and
 * the new reservation names whom it was taken from.
 */
import { monotonicScope } from '../clock.js';
import type { Database } from '../db/contract/database.js';
import type { Notice } from './notice.js';
import type { LiveView } from '../liveness/reservations-live.js';
import { isoTime } from './time.js';

/** A holder whose heartbeat has not moved for this long has stalled, and its reservations may be taken over. */
export const TAKEOVER_STALL_MS = 10 * 60_000;

/** True when `holder`'s session has made no progress for TAKEOVER_STALL_MS, as `view` can tell on a monotonic clock. Call inside a transaction. */
export function isStalled(db: Database, view: LiveView, holder: string): boolean {
  const row = db.get<{ owner: string; heartbeat: number; clock_domain: string | null; heartbeat_mono: number | null }>(
    'SELECT owner, heartbeat, clock_domain, heartbeat_mono FROM sessions WHERE sender = ?',
    [holder],
  );
  if (row === undefined) return false;
  const scope = monotonicScope(view.clock, view.owner);
  const mono = view.clock.monotonic();
  if (row.clock_domain === scope && row.heartbeat_mono !== null) return mono - row.heartbeat_mono >= TAKEOVER_STALL_MS;
  const seen = db.get<{ owner: string; heartbeat: number; seen_mono: number }>(
    'SELECT owner, heartbeat, seen_mono FROM session_sightings WHERE sender = ? AND clock_domain = ?',
    [holder, scope],
  );
  return seen !== undefined && seen.owner === row.owner && seen.heartbeat === row.heartbeat && mono - seen.seen_mono >= TAKEOVER_STALL_MS;
}

/** Records that `takenBy` took `pattern` of `repository` from `holder` at `now`, for the holder's next receive. */
export function recordTakeover(db: Database, takeover: { holder: string; repository: string; pattern: string; takenBy: string; now: number }): void {
  db.run(
    `INSERT INTO reservation_takeovers (holder, repository, pattern, taken_by, taken_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (holder, repository, pattern) DO UPDATE SET taken_by = excluded.taken_by, taken_at = excluded.taken_at`,
    [takeover.holder, takeover.repository, takeover.pattern, takeover.takenBy, takeover.now],
  );
}

/** The notices of `sender`'s reservations taken over since its last receive, removed as they are read. Call inside a write transaction. */
export function takeoverNotices(db: Database, sender: string): Notice[] {
  const rows = db.all<{ repository: string; pattern: string; taken_by: string; taken_at: number }>(
    'SELECT repository, pattern, taken_by, taken_at FROM reservation_takeovers WHERE holder = ? ORDER BY taken_at, pattern',
    [sender],
  );
  if (rows.length === 0) return [];
  db.run('DELETE FROM reservation_takeovers WHERE holder = ?', [sender]);
  return rows.map((r) => ({
    kind: 'reservation_taken',
    message: `${r.taken_by} took over your reservation "${r.pattern}" in ${r.repository} at ${isoTime(r.taken_at)}: your session had made no progress for ${TAKEOVER_STALL_MS / 60_000} minutes. Call reserve again if you still need it (it may now conflict), and release what you no longer need.`,
  }));
}

/** Whom a live reservation was taken from, and when (ms). */
export interface TakenFrom {
  /** The holder (or holders, comma-separated) it was taken from. */
  readonly from: string;
  /** When, ms since the epoch. */
  readonly at: number;
}

/** The reservations granted by a takeover, keyed `repository\0holder\0pattern`; empty on a database before sql/0010. Call inside a transaction. */
export function takenReservations(db: Database, repository?: string): Map<string, TakenFrom> {
  if (db.get(db.capabilities.dialect.columnExists, ['reservations', 'taken_from']) === undefined) return new Map();
  const rows = db.all<{ repository: string; holder: string; pattern: string; taken_from: string; taken_at: number }>(
    `SELECT repository, holder, pattern, taken_from, taken_at FROM reservations WHERE taken_from IS NOT NULL${repository === undefined ? '' : ' AND repository = ?'}`,
    repository === undefined ? [] : [repository],
  );
  return new Map(rows.map((r) => [takenKey(r.repository, r.holder, r.pattern), { from: r.taken_from, at: r.taken_at }]));
}

/** The key of takenReservations. */
export const takenKey = (repository: string, holder: string, pattern: string): string => `${repository}\0${holder}\0${pattern}`;
