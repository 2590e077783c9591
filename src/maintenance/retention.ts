/**
 * Age retention: ordinary messages older than `message_retention_hours` are
 * evicted oldest first. Memories are never age-evicted.
 */
import type { Database } from '../db/contract/database.js';
import { evictMessages, type EvictableRow } from './evict-messages.js';

/**
 * A chunk function for retention. It remembers how far it has scanned, so old
 * memory rows (which it must skip) are read once per tick rather than once
 * per chunk.
 */
export function retentionChunk(db: Database, now: number, retentionHours: number): (limit: number) => number {
  const cutoff = now - retentionHours * 3_600_000;
  let afterCreated = Number.MIN_SAFE_INTEGER;
  let afterSeq = 0;
  return (limit) => {
    const rows = db.all<EvictableRow & { created_at: number }>(
      `SELECT seq, channel, created_at FROM messages
       WHERE created_at >= ? AND created_at < ? AND memory_id IS NULL AND NOT (created_at = ? AND seq <= ?)
       ORDER BY created_at, seq ${db.capabilities.dialect.limit}`,
      [afterCreated, cutoff, afterCreated, afterSeq, limit],
    );
    const last = rows.at(-1);
    if (last !== undefined) {
      afterCreated = last.created_at;
      afterSeq = last.seq;
    }
    evictMessages(db, rows);
    return rows.length;
  };
}
