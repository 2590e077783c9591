/**
 * Reading memories as a whole, for a person's console: the live ones, newest
 * first, and every stored revision of one (tombstoned ones included, until
 * maintenance purges them), without a session.
 */
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { requireLiveRevision } from './memory-revision.js';
import { MESSAGE_COLUMNS, toMessage, type Message, type MessageRow } from './message-row.js';

/** A revision as history shows it: the message plus whether it is the live one. */
export type MemoryRevision = Message & { readonly live: boolean };

/** The live revision of every memory (of `channel` when given), the most recently changed first, at most `limit`. */
export function listMemories(ctx: BusContext, options: { channel?: string; limit: number }): Message[] {
  return ctx.db.read(() => {
    const where = options.channel === undefined ? '' : 'AND m.channel = ?';
    const params = options.channel === undefined ? [options.limit] : [options.channel, options.limit];
    return ctx.db
      .all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.memory_id IS NOT NULL AND m.tombstone = 0 ${where} ORDER BY m.seq DESC ${ctx.db.capabilities.dialect.limit}`, params)
      .map(toMessage);
  });
}

/** The live revision of a memory; throws `not_found` saying why (deleted, not a memory, a later revision's seq). */
export function showMemory(ctx: BusContext, memoryId: number): Message {
  return ctx.db.read(() => toMessage(requireLiveRevision(ctx, memoryId)));
}

/** Every stored revision of a memory, oldest first; throws `not_found` when none is stored. */
export function memoryHistory(ctx: BusContext, memoryId: number): MemoryRevision[] {
  return ctx.db.read(() => {
    const rows = ctx.db.all<MessageRow & { tombstone: number }>(
      `SELECT ${MESSAGE_COLUMNS}, m.tombstone FROM messages m WHERE m.memory_id = ? ORDER BY m.revision`,
      [memoryId],
    );
    if (rows.length === 0) {
      // The same explanation get_memory gives (an ordinary message's seq, a later revision's seq, or nothing).
      requireLiveRevision(ctx, memoryId);
      throw new BusError('not_found', `memory_id: no memory ${memoryId}`, { field: 'memory_id' });
    }
    return rows.map((row) => ({ ...toMessage(row), live: row.tombstone === 0 }));
  });
}
