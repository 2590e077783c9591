/**
 * `agentbus reset`: wipe all bus data in one transaction, never unlinking
 * the file (other processes have it open). A live process notices by itself:
 * its session row is gone, so its next `as` lookup fails with not_registered
 * and registering again recovers.
 *
 * Seqs are NOT restarted (sqlite_sequence is kept): a seq a client still
 * holds from before the reset (a reply_to, a history `before`, a batch in
 * flight) must never come to name a different message afterwards.
 */
import type { Database } from '../db/database.js';
import { STALE_SESSION_MS } from './stale-rows.js';

/** Bus tables in the order they are emptied: dependants before what they reference. */
export const BUS_TABLES = [
  'embeddings',
  'receipts',
  'subscriptions',
  'sessions',
  'messages',
  'channels',
  'notices',
  'leases',
] as const;

export interface ResetReport {
  /** Rows deleted per table. */
  readonly deleted: Readonly<Record<(typeof BUS_TABLES)[number], number>>;
}

/** Deletes every row of every bus table and empties the FTS index, in one write transaction. */
export function resetDatabase(db: Database): ResetReport {
  return db.transaction(() => {
    const deleted = {} as Record<(typeof BUS_TABLES)[number], number>;
    for (const table of BUS_TABLES) {
      // The messages delete trigger removes each row's FTS entries as it goes.
      deleted[table] = db.run(`DELETE FROM ${table}`).changes;
    }
    // Leaves a clean, empty index even if it ever drifted from messages.
    db.run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    db.run("INSERT INTO leases (name, owner, expires_at) VALUES ('maintenance', '', 0)");
    return { deleted };
  });
}

export interface LiveSession {
  /** The display name the session holds. */
  readonly sender: string;
  /** Its context (usually the working directory's basename). */
  readonly context: string;
  /** When it last proved it was alive, in ms since the epoch. */
  readonly heartbeat: number;
}

/** Sessions whose heartbeat is recent enough that their process is probably running. */
export function liveSessions(db: Database, now: number): LiveSession[] {
  return db.all<LiveSession>('SELECT sender, context, heartbeat FROM sessions WHERE heartbeat >= ? ORDER BY sender', [
    now - STALE_SESSION_MS,
  ]);
}
