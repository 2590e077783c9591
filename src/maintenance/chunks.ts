/**
 * Chunked deletes: every cleanup statement touches at most 1,000 rows per
 * write transaction and releases the writer lock between chunks, so a
 * concurrent sender waits for one chunk at most, never for a whole cleanup.
 *
 * Releasing the lock is not enough on its own: SQLite has no queue of
 * waiting writers, a waiter just retries on its busy-handler schedule (1, 2,
 * 5 ... 100 ms apart). A loop that re-takes the lock microseconds after
 * releasing it starves every other process for the whole cleanup (measured:
 * 3.5 s send stalls). So each loop pauses after each transaction for as long
 * as the transaction held the lock, keeping maintenance under half the
 * writer's time and leaving gaps a waiting sender's retry lands in.
 *
 * Chunk size adapts to the lock-hold goal. A chunk's cost per row varies
 * about twofold from one chunk to the next (page cache, the concurrent
 * sender), so the size moves in proportion to the last hold but grows by at
 * most a quarter per chunk: doubling after a fast chunk overshot (250 rows in
 * 11 ms, then 500 rows in 47 ms, measured on wasm). The first chunk is small
 * for the same reason.
 */
import { performance } from 'node:perf_hooks';
import type { Database } from '../db/contract/database.js';
import { sleepSync } from '../db/contract/sleep-sync.js';
import { SLOW_LOCK_MS, type StepReport } from './step-report.js';

/** The fixed ceiling on rows per cleanup transaction, whatever the lock-hold sizing asks (docs/architecture.md, "Behaviour, briefly": Maintenance tick). */
export const MAX_CHUNK_ROWS = 1000;

/** The first chunk's size when chunks adapt; at most 0.1 ms per row keeps it near the goal on either driver. */
export const FIRST_CHUNK_ROWS = 250;

/** Bounds on the size change per chunk: grow by at most a quarter, shrink by at most half. */
const MAX_GROWTH = 1.25;
const MAX_SHRINK = 0.5;

/** Lock-hold goal: a chunk slower than this makes the next chunk smaller (never larger than MAX_CHUNK_ROWS). */
export const DEFAULT_LOCK_TARGET_MS = 20;

/** Bounds on the pause after a transaction (the pause equals the transaction's hold time within them). */
export const MIN_PAUSE_MS = 2;
export const MAX_PAUSE_MS = 100;

/** One chunk of work: deletes up to `limit` rows inside the caller's transaction and returns how many it deleted. */
export type Chunk = (limit: number) => number;

export interface ChunkOptions {
  /** True once the wall-clock deadline has passed; checked before each chunk. */
  readonly pastDeadline: () => boolean;
  /** True once the step has reached its goal (e.g. usage under target); checked before each chunk. */
  readonly done?: () => boolean;
  /** Adaptive chunk sizing aims each transaction at this many ms; Infinity keeps chunks at MAX_CHUNK_ROWS. */
  readonly lockTargetMs: number;
  /** Runs after each chunk that deleted rows (the tick merges the FTS index there); may take its own transactions. */
  readonly afterChunk?: () => Promise<void>;
}

/** The adaptive chunk size and the last hold, carried from one chunk to the next. */
export interface ChunkState {
  /** Rows the next chunk may delete; between 10 and MAX_CHUNK_ROWS. */
  limit: number;
  /** How long the last transaction held the writer lock, in ms. */
  lastHeldMs: number;
}

/** The state before the first chunk: FIRST_CHUNK_ROWS, or MAX_CHUNK_ROWS when chunks do not adapt. */
export function initialChunkState(lockTargetMs = DEFAULT_LOCK_TARGET_MS): ChunkState {
  return { limit: Number.isFinite(lockTargetMs) ? FIRST_CHUNK_ROWS : MAX_CHUNK_ROWS, lastHeldMs: 0 };
}

/** Runs `fn` as one write transaction and records its hold time in `state` and `report`. */
export function timedTransaction<T>(db: Database, fn: () => T, state: ChunkState, report: StepReport): T {
  const started = performance.now();
  const result = db.transaction(fn);
  state.lastHeldMs = performance.now() - started;
  report.transactions++;
  report.maxLockMs = Math.max(report.maxLockMs, state.lastHeldMs);
  if (state.lastHeldMs > SLOW_LOCK_MS) report.slowTransactions++;
  return result;
}

/** Runs one chunk in its own write transaction, timing the lock hold and adapting the next chunk's size. */
export function runOneChunk(db: Database, chunk: Chunk, state: ChunkState, options: ChunkOptions, report: StepReport): number {
  const rows = timedTransaction(db, () => chunk(state.limit), state, report);
  report.rows += rows;
  if (Number.isFinite(options.lockTargetMs)) {
    const factor = Math.min(MAX_GROWTH, Math.max(MAX_SHRINK, options.lockTargetMs / Math.max(0.1, state.lastHeldMs)));
    state.limit = Math.min(MAX_CHUNK_ROWS, Math.max(10, Math.floor(state.limit * factor)));
  }
  return rows;
}

/** True when the loop must stop: the goal is reached, or the deadline passed (which marks the step cut short). */
export function shouldStop(options: ChunkOptions, report: StepReport): boolean {
  if (options.done?.() === true) return true;
  if (options.pastDeadline()) {
    report.cutShort = true;
    return true;
  }
  return false;
}

function pauseMs(state: ChunkState): number {
  return Math.min(MAX_PAUSE_MS, Math.max(MIN_PAUSE_MS, state.lastHeldMs));
}

/** Leaves the writer lock free for other processes (and, in the tick, lets this process serve requests). */
export function pauseAfter(state: ChunkState): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, pauseMs(state)));
}

/** The same pause for the synchronous send path. */
export function pauseAfterSync(state: ChunkState): void {
  sleepSync(pauseMs(state));
}

/**
 * Runs `chunk` until it deletes fewer rows than asked for, `done` holds, or
 * the deadline passes. Synchronous: for the send path.
 */
export function runChunksSync(db: Database, chunk: Chunk, options: ChunkOptions, report: StepReport): void {
  const state = initialChunkState(options.lockTargetMs);
  while (!shouldStop(options, report)) {
    const asked = state.limit;
    if (runOneChunk(db, chunk, state, options, report) < asked) return;
    pauseAfterSync(state);
  }
}

/** The same loop for the tick, which waits asynchronously between chunks. */
export async function runChunks(db: Database, chunk: Chunk, options: ChunkOptions, report: StepReport): Promise<void> {
  const state = initialChunkState(options.lockTargetMs);
  while (!shouldStop(options, report)) {
    const asked = state.limit;
    const rows = runOneChunk(db, chunk, state, options, report);
    const more = rows >= asked;
    const after = rows > 0 ? options.afterChunk : undefined;
    if (more || after !== undefined) await pauseAfter(state);
    await after?.();
    if (!more) return;
  }
}
