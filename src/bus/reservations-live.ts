/**
 * Which reservations are live, read the same way by the MCP tools, the
 * commit guard, `agentbus status` and the maintenance tick.
 *
 * A reservation is live while it has not expired AND the session that made
 * it still holds its name: a session row with the same display name and
 * the same owner token whose holder has not stopped, judged by the session
 * rule of src/bus/session-liveness.ts (the one register uses). So a
 * reservation ends when its name does: a clean exit (the names are
 * released), a holder that is certainly dead or stopped heartbeating, a
 * name taken over by another process (the owner differs), a reset; and a
 * wall-clock jump never ends a live holder's reservations through its
 * session.
 */
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { HOLDER_COLUMNS, judgeHolder, observer, type SessionHolder } from './session-liveness.js';

/** One stored reservation. */
export interface ReservationRow {
  /** The repository identity (reservations-repository.ts). */
  readonly repository: string;
  /** The canonical pattern (reservations-patterns.ts). */
  readonly pattern: string;
  /** The display name holding it. */
  readonly holder: string;
  /** 1 exclusive, 0 shared. */
  readonly exclusive: number;
  /** Why, as the holder said; null when not given. */
  readonly reason: string | null;
  /** When the holder first reserved this pattern (kept across renewals), ms. */
  readonly reserved_at: number;
  /** When it ends unless renewed, ms. */
  readonly expires_at: number;
}

/** Who asks: its clock (wall time for reservation expiry, monotonic time for the session rule) and owner token. */
export interface LiveView {
  /** The asker's clock. */
  readonly clock: Clock;
  /** The asker's owner token, scoping monotonic readings where the clock has no domain; any fresh string for a process holding no names. */
  readonly owner: string;
}

/**
 * The sessions whose holder has not stopped, as a JSON array of
 * [display name, owner token] pairs (bound as :live_sessions), judged
 * without writing anything (a holder not yet seen counts as live). A
 * database not yet migrated to owner processes (read by the guard, which
 * never migrates) cannot be judged: every session counts as live there, so
 * only expiry ends a reservation.
 */
function liveSessions(db: Database, view: LiveView): string {
  const judged = db.get("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'session_sightings'") !== undefined;
  const rows = db.all<SessionHolder>(judged ? `SELECT ${HOLDER_COLUMNS} FROM sessions` : 'SELECT sender, owner FROM sessions');
  const by = observer(view.clock, view.owner);
  // Sessions are one per running agent: a few dozen, so judging each is cheap.
  return JSON.stringify(rows.filter((row) => !judged || judgeHolder(db, by, row, { record: false }).held).map((row) => [row.sender, row.owner]));
}

/** True for a reservation `r` whose session is among :live_sessions. */
const SESSION_LIVE_SQL = `EXISTS (SELECT 1 FROM json_each(:live_sessions) j
  WHERE json_extract(j.value, '$[0]') = r.holder AND json_extract(j.value, '$[1]') = r.owner)`;

const COLUMNS = 'r.repository, r.pattern, r.holder, r.exclusive, r.reason, r.reserved_at, r.expires_at';

export interface LiveQuery {
  /** Only this repository; every repository when absent. */
  readonly repository?: string;
  /** Only exclusive reservations. */
  readonly exclusiveOnly?: boolean;
}

/** Live reservations, by repository, pattern and holder. Call inside a read or write transaction. */
export function liveReservations(db: Database, view: LiveView, query: LiveQuery = {}): ReservationRow[] {
  const where = [
    query.repository === undefined ? '' : ' AND r.repository = :repository',
    query.exclusiveOnly === true ? ' AND r.exclusive = 1' : '',
  ].join('');
  return db.all<ReservationRow>(`SELECT ${COLUMNS} FROM reservations r WHERE r.expires_at > :now AND ${SESSION_LIVE_SQL}${where} ORDER BY r.repository, r.pattern, r.holder`, {
    now: view.clock.now(),
    live_sessions: liveSessions(db, view),
    ...(query.repository === undefined ? {} : { repository: query.repository }),
  });
}

/**
 * Deletes up to `limit` reservations that are no longer live (expired, or
 * their session gone, stopped, or held by another owner), in `repository`
 * or everywhere. Returns the count. A reservation judged dead is deleted,
 * never revived: a stalled process that heartbeats again finds its claims
 * gone rather than overlapping someone who reserved meanwhile.
 */
export function deleteDeadReservations(db: Database, view: LiveView, limit: number, repository?: string): number {
  return db.run(
    `DELETE FROM reservations WHERE (repository, holder, pattern) IN (
       SELECT r.repository, r.holder, r.pattern FROM reservations r
       WHERE ${repository === undefined ? '' : 'r.repository = :repository AND '}NOT (r.expires_at > :now AND ${SESSION_LIVE_SQL})
       LIMIT :limit)`,
    { now: view.clock.now(), live_sessions: liveSessions(db, view), limit, ...(repository === undefined ? {} : { repository }) },
  ).changes;
}

/** True when the database has the reservations table (schema 6 or later); an older one holds no reservations. */
export function hasReservations(db: Database): boolean {
  return db.get("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'reservations'") !== undefined;
}
