/**
 * The first three tick steps: rows whose time has run out. Each function
 * deletes one chunk (inside the caller's transaction) and returns the count.
 */
import type { Database } from '../db/database.js';

/** A session whose heartbeat is older than this is dead (heartbeats come every 10 s). */
export const STALE_SESSION_MS = 30_000;

/** Deletes up to `limit` sessions whose heartbeat is older than `now - STALE_SESSION_MS`. */
export function deleteStaleSessions(db: Database, now: number, limit: number): number {
  return db.run('DELETE FROM sessions WHERE sender IN (SELECT sender FROM sessions WHERE heartbeat < ? LIMIT ?)', [
    now - STALE_SESSION_MS,
    limit,
  ]).changes;
}

/** Deletes up to `limit` idempotency receipts whose `expires_at` has passed. */
export function deleteExpiredReceipts(db: Database, now: number, limit: number): number {
  return db.run(
    'DELETE FROM receipts WHERE (sender, key) IN (SELECT sender, key FROM receipts WHERE expires_at <= ? LIMIT ?)',
    [now, limit],
  ).changes;
}

/**
 * Deletes up to `limit` subscriptions whose `last_activity` is older than
 * `cursor_idle_hours`, leaving an expiry marker for each (the subscriber's next
 * receive reports it), and purges markers nobody consumed within another
 * `cursor_idle_hours`. Returns the rows deleted from both tables.
 */
export function deleteIdleSubscriptions(db: Database, now: number, cursorIdleHours: number, limit: number): number {
  const idleBefore = now - cursorIdleHours * 3_600_000;
  const purged = db.run(
    'DELETE FROM expired_subscriptions WHERE (sender, channel) IN (SELECT sender, channel FROM expired_subscriptions WHERE expired_at < ? LIMIT ?)',
    [idleBefore, limit],
  ).changes;
  if (purged >= limit) return purged;
  const idle = db.all<{ sender: string; channel: string }>('SELECT sender, channel FROM subscriptions WHERE last_activity < ? LIMIT ?', [
    idleBefore,
    limit - purged,
  ]);
  for (const { sender, channel } of idle) {
    db.run(
      'INSERT INTO expired_subscriptions (sender, channel, expired_at) VALUES (?, ?, ?) ON CONFLICT (sender, channel) DO UPDATE SET expired_at = excluded.expired_at',
      [sender, channel, now],
    );
    db.run('DELETE FROM subscriptions WHERE sender = ? AND channel = ?', [sender, channel]);
  }
  return purged + idle.length;
}
