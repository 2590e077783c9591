/**
 * `agentbus reset`: wipe all bus data in one transaction, never unlinking
 * the file (other processes have it open). A live process notices by itself:
 * its session row is gone, so its next `as` lookup fails with not_registered
 * and registering again recovers.
 *
 * Seqs are NOT restarted (sqlite_sequence, or PostgreSQL's identity
 * sequence, is kept): a seq a client still holds from before the reset (a
 * reply_to, a history `before`, a batch in flight) must never come to name a
 * different message afterwards.
 */
import { HOLDER_COLUMNS, judgeHolder, observer, type SessionHolder } from '../liveness/session-liveness.js';
import { DIRECT_CHANNEL } from '../db/open/direct-channel.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/contract/database.js';

/**
 * The channels a new database starts with (seeded by sql/0001_schema.sql, and
 * the reserved '@direct' of direct messages by sql/0012); a reset database
 * must look like a new one, so they are seeded again.
 */
export const DEFAULT_CHANNELS: readonly { readonly name: string; readonly kind: 'ordinary' | 'memory' }[] = [
  { name: 'general', kind: 'ordinary' },
  { name: 'memory', kind: 'memory' },
  { name: DIRECT_CHANNEL, kind: 'ordinary' },
];

/**
 * Bus tables in the order they are emptied: dependants before what they
 * reference, and the per-channel counts after the messages whose delete
 * trigger moves them (a reset bus holds no count row, as a new one).
 */
export const BUS_TABLES = [
  'embeddings',
  'receipts',
  'reservation_takeovers',
  'reservations',
  'expired_subscriptions',
  'subscriptions',
  'session_sightings',
  'sessions',
  'known_names',
  'direct_recipients',
  'messages',
  'channel_message_counts',
  'channels',
  'notices',
  'leases',
] as const;

/**
 * The tables of either engine's schema that a reset does not empty, each with
 * why; every other table is in BUS_TABLES (test/maintenance/reset.test.ts
 * fails on a table in neither).
 */
export const KEPT_TABLES: Readonly<Record<string, string>> = {
  schema_migrations: 'the schema and its migration record survive a reset',
  memory_generation: 'readers cache by it, so it only grows, as seqs do (deleting the memories bumps it)',
  messages_fts: "SQLite's text index: emptied by its 'delete-all' command, not by a DELETE",
  message_bytes: "PostgreSQL's capacity measure, kept by triggers: deleting the messages brings it to 0",
};

export interface ResetReport {
  /** Rows deleted per table. */
  readonly deleted: Readonly<Record<(typeof BUS_TABLES)[number], number>>;
}

/**
 * Deletes every row of every bus table and empties the text index, in one
 * write transaction, then re-seeds what a new database starts with (the
 * maintenance lease row and the default channels).
 */
export function resetDatabase(db: Database): ResetReport {
  return db.transaction(() => {
    const deleted = {} as Record<(typeof BUS_TABLES)[number], number>;
    for (const table of BUS_TABLES) {
      // The messages delete trigger removes each row's FTS entries as it goes.
      deleted[table] = db.run(`DELETE FROM ${table}`).changes;
    }
    // Leaves a clean, empty FTS5 index even if it ever drifted from messages
    // (a tsvector index is a column of messages itself: it went with the rows).
    if (db.capabilities.fullText === 'fts5') db.run("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')");
    db.run("INSERT INTO leases (name, owner, expires_at) VALUES ('maintenance', '', 0)");
    for (const channel of DEFAULT_CHANNELS) {
      // created_seq marks where the channel's history starts; seqs keep counting past the reset.
      db.run('INSERT INTO channels (name, kind, created_seq) VALUES (?, ?, 0)', [channel.name, channel.kind]);
    }
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

/**
 * Sessions whose holder has not stopped, judged as register judges them
 * (src/liveness/session-liveness.ts) without writing anything. `observerToken`
 * scopes monotonic readings where the clock has no domain.
 */
export function liveSessions(db: Database, clock: Clock, observerToken: string): LiveSession[] {
  const by = observer(clock, observerToken);
  return db
    .all<SessionHolder & { context: string }>(`SELECT ${HOLDER_COLUMNS}, context FROM sessions ORDER BY sender`)
    .filter((row) => judgeHolder(db, by, row, { record: false }).held)
    .map((row) => ({ sender: row.sender, context: row.context, heartbeat: row.heartbeat }));
}
