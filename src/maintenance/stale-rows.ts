/**
 * The first three tick steps: rows whose time has run out. Each function
 * works through one chunk (inside the caller's transaction) and returns the
 * number of rows it deleted or changed.
 *
 * Sessions and receipts age on monotonic clocks, never by comparing a stored
 * wall-clock time with the wall clock: a clock set forward must not free a
 * live holder's name or drop a receipt a retry still needs, and a clock set
 * back must not keep them for hours.
 */
import { monotonicScope, type Clock } from '../clock.js';
import type { Database } from '../db/contract/database.js';
import { forgetSightings, HOLDER_COLUMNS, judgeHolder, observer, type SessionHolder } from '../liveness/session-liveness.js';

/** Who runs the step: its clock and owner token (the owner scopes monotonic readings where the clock has no domain). */
export interface StepObserver {
  /** The tick's clock. */
  readonly clock: Clock;
  /** The ticking process's owner token. */
  readonly owner: string;
}

/**
 * Deletes up to `limit` sessions whose holder has stopped (judged as
 * register judges it, src/liveness/session-liveness.ts, recording first
 * sightings so a later tick can judge holders it cannot see), with what
 * observers saw of them, and sightings left by rows that are gone.
 */
export function deleteStaleSessions(db: Database, by: StepObserver, limit: number): number {
  const judge = observer(by.clock, by.owner);
  let deleted = db.run(
    `DELETE FROM session_sightings WHERE (sender, clock_domain) IN (SELECT sender, clock_domain FROM session_sightings WHERE sender NOT IN (SELECT sender FROM sessions) ${db.capabilities.dialect.limit})`,
    [limit],
  ).changes;
  // Sessions are one per running agent: a few dozen, so judging each is cheap.
  for (const row of db.all<SessionHolder>(`SELECT ${HOLDER_COLUMNS} FROM sessions ORDER BY sender`)) {
    if (deleted >= limit) break;
    if (judgeHolder(db, judge, row, { record: true }).held) continue;
    db.run('DELETE FROM sessions WHERE sender = ? AND owner = ?', [row.sender, row.owner]);
    forgetSightings(db, row.sender);
    deleted++;
  }
  return deleted;
}

/**
 * Deletes up to `limit` idempotency receipts older than `retentionMs` on this
 * tick's monotonic clock. A receipt made on a clock this one cannot compare
 * with (another boot, another machine, a row from before migration 0007) is
 * first adopted: its age restarts at zero on this clock, so it is kept up to
 * one retention longer than asked, never shorter. Adoptions count as rows.
 */
export function deleteExpiredReceipts(db: Database, by: StepObserver, retentionMs: number, limit: number): number {
  const scope = monotonicScope(by.clock, by.owner);
  const mono = by.clock.monotonic();
  // Three ranges of the (clock_domain, created_mono) index, not a scan of every receipt.
  const adopted = db.run(
    `UPDATE receipts SET clock_domain = ?, created_mono = ?
      WHERE (sender, key) IN (SELECT sender, key FROM receipts WHERE clock_domain IS NULL OR clock_domain < ? OR clock_domain > ? ${db.capabilities.dialect.limit})`,
    [scope, mono, scope, scope, limit],
  ).changes;
  if (adopted >= limit) return adopted;
  return (
    adopted +
    db.run(
      `DELETE FROM receipts WHERE (sender, key) IN
        (SELECT sender, key FROM receipts WHERE clock_domain = ? AND created_mono <= ? ${db.capabilities.dialect.limit})`,
      [scope, mono - retentionMs, limit - adopted],
    ).changes
  );
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
    `DELETE FROM expired_subscriptions WHERE (sender, channel) IN (SELECT sender, channel FROM expired_subscriptions WHERE expired_at < ? ${db.capabilities.dialect.limit})`,
    [idleBefore, limit],
  ).changes;
  if (purged >= limit) return purged;
  const idle = db.all<{ sender: string; channel: string }>(`SELECT sender, channel FROM subscriptions WHERE last_activity < ? ${db.capabilities.dialect.limit}`, [
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
