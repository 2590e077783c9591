/**
 * Capacity: one budget, `sqlite_budget_mib`, on the pages live data occupies
 * ((page_count - freelist_count) x page_size). Deleted rows free pages to the
 * freelist, so usage falls as eviction proceeds, before any vacuum. Ordinary
 * messages are evicted globally oldest first; memories never are.
 */
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import {
  DEFAULT_LOCK_TARGET_MS,
  initialChunkState,
  pauseAfter,
  pauseAfterSync,
  runChunksSync,
  runOneChunk,
  shouldStop,
  type Chunk,
  type ChunkOptions,
} from './chunks.js';
import { mergeFtsOnce, mergesFtsSegments } from './fts-merge.js';
import { setCapacityNotice } from './capacity-notice.js';
import { evictMessages, type EvictableRow } from './evict-messages.js';
import { emptyStep, type StepReport } from './step-report.js';
import { purgeTombstones } from './tombstones.js';

const MIB = 1024 * 1024;

/**
 * How long an inline eviction (inside send) keeps going towards the full
 * target; after this it stops as soon as the write fits under the budget, so
 * a send is not held up for a whole cleanup. The tick finishes the job.
 */
export const INLINE_EVICTION_MS = 200;

export interface CapacityUsage {
  /** Bytes in pages that hold live data. */
  readonly usedBytes: number;
  /** `sqlite_budget_mib` in bytes. */
  readonly budgetBytes: number;
  /** Where eviction stops: the budget less `cleanup_free_percent`. */
  readonly targetBytes: number;
}

/** Bytes of live data now, by the dialect's measure (SQLite: live pages, from the pragmas); exact, no counter kept anywhere. One cached statement: send calls this every time. */
export function usedBytes(db: Database): number {
  const row = db.get<{ used: number }>(db.capabilities.dialect.usedBytes);
  return row?.used ?? 0;
}

/** The budget in bytes. */
export function budgetBytes(config: Config): number {
  return config.sqlite_budget_mib * MIB;
}

/** The eviction target in bytes: the budget less `cleanup_free_percent`. */
export function targetBytes(config: Config): number {
  return Math.floor(budgetBytes(config) * (1 - config.cleanup_free_percent / 100));
}

export function capacityUsage(db: Database, config: Config): CapacityUsage {
  return { usedBytes: usedBytes(db), budgetBytes: budgetBytes(config), targetBytes: targetBytes(config) };
}

/** A chunk function evicting ordinary messages globally oldest first (by seq). */
export function capacityChunk(db: Database): (limit: number) => number {
  let afterSeq = 0;
  return (limit) => {
    const rows = db.all<EvictableRow>(
      `SELECT seq, channel FROM messages WHERE seq > ? AND memory_id IS NULL ORDER BY seq ${db.capabilities.dialect.limit}`,
      [afterSeq, limit],
    );
    const last = rows.at(-1);
    if (last !== undefined) afterSeq = last.seq;
    evictMessages(db, rows);
    return rows.length;
  };
}

function evictionRounds(db: Database, options: ChunkOptions, report: StepReport) {
  const evict: Chunk = capacityChunk(db);
  const state = initialChunkState(options.lockTargetMs);
  const mergeState = initialChunkState();
  let rowsLeft = true;
  return {
    state,
    mergeState,
    /** One eviction chunk (while rows are left); true when rows may remain. */
    evict(): boolean {
      if (rowsLeft) {
        const asked = state.limit;
        rowsLeft = runOneChunk(db, evict, state, options, report) >= asked;
      }
      return rowsLeft;
    },
    /** One bounded FTS merge; true when it did work. */
    merge(): boolean {
      return mergesFtsSegments(db) && mergeFtsOnce(db, 'all', mergeState, report);
    },
  };
}

/**
 * Evicts ordinary messages oldest first, merging the FTS index as it goes so
 * the freed space shows in usage, until `options.done` holds, the deadline
 * passes, or nothing evictable is left. Synchronous, for the send path.
 */
export function evictForCapacitySync(db: Database, options: ChunkOptions, report: StepReport): void {
  const rounds = evictionRounds(db, options, report);
  while (!shouldStop(options, report)) {
    const rowsLeft = rounds.evict();
    pauseAfterSync(rounds.state);
    const merged = rounds.merge();
    if (!rowsLeft && !merged) return;
    pauseAfterSync(rounds.mergeState);
  }
}

/** The same for the tick, which waits asynchronously between transactions. */
export async function evictForCapacity(db: Database, options: ChunkOptions, report: StepReport): Promise<void> {
  const rounds = evictionRounds(db, options, report);
  while (!shouldStop(options, report)) {
    const rowsLeft = rounds.evict();
    await pauseAfter(rounds.state);
    const merged = rounds.merge();
    if (!rowsLeft && !merged) return;
    await pauseAfter(rounds.mergeState);
  }
}

export interface EnsureCapacityOptions {
  /** Monotonic clock for the inline eviction's time limit, ms; defaults to the system's. */
  readonly timer?: () => number;
  /** Receives what the inline eviction did (for tests and logs). */
  readonly report?: StepReport;
}

/**
 * Makes room for a write of about `bytes` bytes; call before the write
 * transaction. Under budget it only reads three pragmas. Over budget it
 * evicts ordinary messages (and purges tombstones past their minimum age)
 * in chunks. Returns false, with the capacity notice set, when that cannot
 * make the write fit (the bus turns that into `capacity_exhausted`:
 * src/bus/capacity-check.ts).
 */
export function makeRoom(db: Database, config: Config, now: number, bytes: number, options: EnsureCapacityOptions = {}): boolean {
  const budget = budgetBytes(config);
  if (usedBytes(db) + bytes <= budget) return true;
  const timer = options.timer ?? systemClock.monotonic;
  const started = timer();
  const target = targetBytes(config);
  const report = options.report ?? emptyStep('capacity');
  const chunkOptions: ChunkOptions = {
    pastDeadline: () => false,
    done: () => {
      const used = usedBytes(db) + bytes;
      return used <= target || (used <= budget && timer() - started >= INLINE_EVICTION_MS);
    },
    lockTargetMs: DEFAULT_LOCK_TARGET_MS,
  };
  evictForCapacitySync(db, chunkOptions, report);
  if (usedBytes(db) + bytes <= budget) return true;
  runChunksSync(db, (limit) => purgeTombstones(db, now, config.tombstone_min_hours, limit), chunkOptions, report);
  if (usedBytes(db) + bytes <= budget) return true;
  db.transaction(() => setCapacityNotice(db, config, now));
  return false;
}
