/**
 * Which reservations are live, read the same way by the MCP tools, the
 * commit guard, `agentbus status` and the maintenance tick.
 *
 * A reservation is live while it has not expired AND the session that made
 * it still holds its name: a session row with the same display name and
 * the same owner token whose holder has not stopped, judged by the session
 * rule of src/liveness/session-liveness.ts (the one register uses). So a
 * reservation ends when its name does: a clean exit (the names are
 * released), a holder that is certainly dead or stopped heartbeating, a
 * name taken over by another process (the owner differs), a reset; and a
 * wall-clock jump never ends a live holder's reservations through its
 * session.
 *
 * Expiry is measured on the maker's monotonic clock wherever the reader
 * reads the same clock (sql/0008): a wall clock set forward never ends a
 * claim early, one set back never keeps it past its ttl. Only a reader on
 * another clock, or a row written before that migration or by an older
 * agentbus, goes by the wall-clock `expires_at`.
 */
import { monotonicScope, type Clock } from '../clock.js';
import type { Database } from '../db/contract/database.js';
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
  /**
   * When it ends unless renewed, ms on the reader's wall clock: for a row
   * whose expiry this reader can measure on its monotonic clock and whose
   * wall clock has jumped since (by more than a second), now plus what is
   * left of it, so it agrees with the judgement; otherwise as stored.
   */
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
  const judged = db.get(db.capabilities.dialect.tableExists, ['session_sightings']) !== undefined;
  const rows = db.all<SessionHolder>(judged ? `SELECT ${HOLDER_COLUMNS} FROM sessions` : 'SELECT sender, owner FROM sessions');
  const by = observer(view.clock, view.owner);
  // Sessions are one per running agent: a few dozen, so judging each is cheap.
  return JSON.stringify(rows.filter((row) => !judged || judgeHolder(db, by, row, { record: false }).held).map((row) => [row.sender, row.owner]));
}

/** True for a reservation `r` whose session is among :live_sessions. */
function sessionLiveSql(db: Database): string {
  return db.capabilities.dialect.jsonPairIn(':live_sessions', 'r.holder', 'r.owner');
}

/** A difference between the stored and the measured wall-clock end smaller than this is not a jump. */
const JUMP_TOLERANCE_MS = 1_000;

/**
 * The SQL that tells an unexpired reservation `r` and the wall-clock time it
 * ends, for the reader `view`, with their parameters. Before sql/0008 (the
 * guard reads without migrating) there is no monotonic expiry to read.
 */
function expiry(db: Database, view: LiveView): { unexpired: string; endsAt: string; params: Record<string, number | string> } {
  const now = view.clock.now();
  const monotonic = db.get(db.capabilities.dialect.columnExists, ['reservations', 'expires_mono']) !== undefined;
  if (!monotonic) return { unexpired: 'r.expires_at > :now', endsAt: 'r.expires_at', params: { now } };
  const same = 'r.clock_domain = :scope AND r.expires_mono IS NOT NULL';
  // Read on the monotonic clock, the wall-clock end moves with each reading by a millisecond or so
  // (the two clocks tick apart): the stored one is shown unless the wall clock has jumped.
  const measured = ':now + (r.expires_mono - :mono)';
  return {
    unexpired: `(CASE WHEN ${same} THEN r.expires_mono > :mono ELSE r.expires_at > :now END)`,
    endsAt: `(CASE WHEN ${same} AND abs(${measured} - r.expires_at) > ${JUMP_TOLERANCE_MS} THEN ${measured} ELSE r.expires_at END)`,
    params: { now, mono: view.clock.monotonic(), scope: monotonicScope(view.clock, view.owner) },
  };
}

/** What a new or renewed reservation stores for its expiry `ttlMs` from now, on both clocks. */
export function expiryColumns(view: LiveView, ttlMs: number): { expires_at: number; clock_domain: string; expires_mono: number } {
  return { expires_at: view.clock.now() + ttlMs, clock_domain: monotonicScope(view.clock, view.owner), expires_mono: view.clock.monotonic() + ttlMs };
}

const COLUMNS = 'r.repository, r.pattern, r.holder, r.exclusive, r.reason, r.reserved_at';

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
  const ends = expiry(db, view);
  return db.all<ReservationRow>(
    `SELECT ${COLUMNS}, ${ends.endsAt} AS expires_at FROM reservations r WHERE ${ends.unexpired} AND ${sessionLiveSql(db)}${where} ORDER BY r.repository, r.pattern, r.holder`,
    {
      ...ends.params,
      live_sessions: liveSessions(db, view),
      ...(query.repository === undefined ? {} : { repository: query.repository }),
    },
  );
}

/**
 * Deletes up to `limit` reservations that are no longer live (expired, or
 * their session gone, stopped, or held by another owner), in `repository`
 * or everywhere. Returns the count. A reservation judged dead is deleted,
 * never revived: a stalled process that heartbeats again finds its claims
 * gone rather than overlapping someone who reserved meanwhile.
 */
export function deleteDeadReservations(db: Database, view: LiveView, limit: number, repository?: string): number {
  const ends = expiry(db, view);
  return db.run(
    `DELETE FROM reservations WHERE (repository, holder, pattern) IN (
       SELECT r.repository, r.holder, r.pattern FROM reservations r
       WHERE ${repository === undefined ? '' : 'r.repository = :repository AND '}NOT (${ends.unexpired} AND ${sessionLiveSql(db)})
       LIMIT :limit)`,
    { ...ends.params, live_sessions: liveSessions(db, view), limit, ...(repository === undefined ? {} : { repository }) },
  ).changes;
}

/** True when the database has the reservations table (schema 6 or later); an older one holds no reservations. */
export function hasReservations(db: Database): boolean {
  return db.get(db.capabilities.dialect.tableExists, ['reservations']) !== undefined;
}
