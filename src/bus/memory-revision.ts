/**
 * Finding a memory's live revision: the one row of a memory with
 * tombstone = 0. Shared by get_memory, edit_memory and delete_memory so all
 * three explain a miss the same way.
 */
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { MESSAGE_COLUMNS, type MessageRow } from './message-row.js';

/** A live memory revision: the message row with memory_id and revision set. */
export interface LiveRevision extends MessageRow {
  memory_id: number;
  revision: number;
}

/** The live revision of `memoryId`, or undefined when the memory does not exist or was deleted. */
export function findLiveRevision(ctx: BusContext, memoryId: number): LiveRevision | undefined {
  return ctx.db.get<LiveRevision>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.memory_id = ? AND m.tombstone = 0 ORDER BY m.revision DESC LIMIT 1`,
    [memoryId],
  );
}

/** The live revision of `memoryId`; throws `not_found` on `memory_id` saying why there is none and what to pass instead. */
export function requireLiveRevision(ctx: BusContext, memoryId: number): LiveRevision {
  const live = findLiveRevision(ctx, memoryId);
  if (live !== undefined) return live;
  throw new BusError('not_found', `memory_id: ${whyMissing(ctx, memoryId)}`, { field: 'memory_id' });
}

function whyMissing(ctx: BusContext, memoryId: number): string {
  if (ctx.db.get('SELECT 1 FROM messages WHERE memory_id = ? LIMIT 1', [memoryId]) !== undefined) {
    return `memory ${memoryId} was deleted; it has no live revision to read or edit`;
  }
  const row = ctx.db.get<{ memory_id: number | null; revision: number | null }>('SELECT memory_id, revision FROM messages WHERE seq = ?', [
    memoryId,
  ]);
  if (row === undefined) return `no memory ${memoryId}; pass the memory_id of a message on a memory channel (search or receive show it)`;
  if (row.memory_id === null) return `seq ${memoryId} is an ordinary message, not a memory; memories live on memory channels`;
  return `seq ${memoryId} is revision ${row.revision} of memory ${row.memory_id}; pass memory_id ${row.memory_id}`;
}

/** The next revision number of a memory: one past the highest ever stored, tombstoned or not. */
export function nextRevision(ctx: BusContext, memoryId: number): number {
  return (ctx.db.get<{ r: number | null }>('SELECT max(revision) AS r FROM messages WHERE memory_id = ?', [memoryId])?.r ?? 0) + 1;
}
