/**
 * Removing ordinary messages while keeping gap reports exact: every channel
 * that lost messages gets `evicted_before_seq` raised past the highest seq it
 * lost, in the same transaction as the delete.
 */
import type { Database } from '../db/contract/database.js';

export interface EvictableRow {
  /** The message's seq. */
  readonly seq: number;
  /** Its channel. */
  readonly channel: string;
}

/** Deletes the given ordinary messages and raises their channels' boundaries; call inside a transaction. */
export function evictMessages(db: Database, rows: readonly EvictableRow[]): number {
  const highest = new Map<string, number>();
  let deleted = 0;
  for (const row of rows) {
    // memory_id IS NULL again here: memories are never evicted, whatever the caller selected.
    deleted += db.run('DELETE FROM messages WHERE seq = ? AND memory_id IS NULL', [row.seq]).changes;
    highest.set(row.channel, Math.max(highest.get(row.channel) ?? 0, row.seq));
  }
  for (const [channel, seq] of highest) {
    db.run(`UPDATE channels SET evicted_before_seq = ${db.capabilities.dialect.greatest}(evicted_before_seq, ?) WHERE name = ?`, [seq + 1, channel]);
  }
  return deleted;
}
