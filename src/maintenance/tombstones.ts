/**
 * Tombstone purge: superseded and deleted memory revisions older than
 * `tombstone_min_hours` are removed. Their FTS rows go with them through the
 * messages_fts_delete trigger, their embeddings through ON DELETE CASCADE
 * (foreign_keys is on for every connection).
 */
import type { Database } from '../db/contract/database.js';

/** Deletes up to `limit` revisions tombstoned before `now - tombstoneMinHours`; call inside a transaction. */
export function purgeTombstones(db: Database, now: number, tombstoneMinHours: number, limit: number): number {
  const rows = db.all<{ seq: number }>(
    `SELECT seq FROM messages WHERE tombstone_at IS NOT NULL AND tombstone_at < ? AND tombstone = 1 ORDER BY tombstone_at ${db.capabilities.dialect.limit}`,
    [now - tombstoneMinHours * 3_600_000, limit],
  );
  for (const row of rows) db.run('DELETE FROM messages WHERE seq = ?', [row.seq]);
  return rows.length;
}
