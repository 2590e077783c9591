/**
 * Which reservations are live, read the same way by the MCP tools, the
 * commit guard, `agentbus status` and the maintenance tick.
 *
 * A reservation is live while it has not expired AND the session that made
 * it still holds its name: a session row with the same display name and
 * the same owner token, live by the session rule of identity.ts. So a
 * reservation ends when its name does: a clean exit (the names are
 * released), a process that stopped heartbeating (the name expires), a
 * name taken over by another process (the owner differs), a reset. When the
 * session rule changes (identity.ts), change `liveSessionSql` and every
 * reader follows.
 */
import type { Database } from '../db/database.js';
import { SESSION_EXPIRY_MS } from './identity.js';

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

/**
 * The session half of liveness, as SQL over `sessions s` joined on the
 * reservation's holder and owner; binds `:session_live_after`.
 */
function liveSessionSql(): string {
  return 's.heartbeat >= :session_live_after';
}

function liveParams(now: number): { now: number; session_live_after: number } {
  return { now, session_live_after: now - SESSION_EXPIRY_MS };
}

const LIVE_FROM = `FROM reservations r JOIN sessions s ON s.sender = r.holder AND s.owner = r.owner
  WHERE r.expires_at > :now AND ${liveSessionSql()}`;
const COLUMNS = 'r.repository, r.pattern, r.holder, r.exclusive, r.reason, r.reserved_at, r.expires_at';

export interface LiveQuery {
  /** Only this repository; every repository when absent. */
  readonly repository?: string;
  /** Only exclusive reservations. */
  readonly exclusiveOnly?: boolean;
}

/** Live reservations, by repository, pattern and holder. Call inside a read or write transaction. */
export function liveReservations(db: Database, now: number, query: LiveQuery = {}): ReservationRow[] {
  const where = [
    query.repository === undefined ? '' : ' AND r.repository = :repository',
    query.exclusiveOnly === true ? ' AND r.exclusive = 1' : '',
  ].join('');
  return db.all<ReservationRow>(`SELECT ${COLUMNS} ${LIVE_FROM}${where} ORDER BY r.repository, r.pattern, r.holder`, {
    ...liveParams(now),
    ...(query.repository === undefined ? {} : { repository: query.repository }),
  });
}

/**
 * Deletes up to `limit` reservations that are no longer live (expired, or
 * their session gone, not live, or held by another owner), in `repository`
 * or everywhere. Returns the count. A reservation judged dead is deleted,
 * never revived: a stalled process that heartbeats again finds its claims
 * gone rather than overlapping someone who reserved meanwhile.
 */
export function deleteDeadReservations(db: Database, now: number, limit: number, repository?: string): number {
  return db.run(
    `DELETE FROM reservations WHERE (repository, holder, pattern) IN (
       SELECT r.repository, r.holder, r.pattern FROM reservations r
       WHERE ${repository === undefined ? '' : 'r.repository = :repository AND '}NOT EXISTS (
         SELECT 1 FROM sessions s WHERE s.sender = r.holder AND s.owner = r.owner AND r.expires_at > :now AND ${liveSessionSql()})
       LIMIT :limit)`,
    { ...liveParams(now), limit, ...(repository === undefined ? {} : { repository }) },
  ).changes;
}

/** True when the database has the reservations table (schema 6 or later); an older one holds no reservations. */
export function hasReservations(db: Database): boolean {
  return db.get("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'reservations'") !== undefined;
}
