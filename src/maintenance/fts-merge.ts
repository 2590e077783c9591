/**
 * Merging the full-text index in bounded steps. Automerge is off for
 * messages_fts (sql/0002_fts_merge_in_maintenance.sql): a write only adds its
 * own segment, and the tick does the merging, a few pages per transaction, so
 * no transaction holds the writer lock for long.
 *
 * Two kinds of merge, both FTS5's 'merge' command with a page budget:
 * - `levels` (a positive budget) merges a level once it holds `usermerge`
 *   (4) segments: what automerge would have done, keeping the number of
 *   segments a query reads logarithmic.
 * - `all` (a negative budget) merges across levels. Deletes are recorded as
 *   markers in new segments, so evicting rows first grows messages_fts_data;
 *   capacity eviction needs the space back, which only merging into the
 *   older segments gives.
 */
import type { Database } from '../db/contract/database.js';
import { initialChunkState, pauseAfter, timedTransaction, type ChunkState } from './chunks.js';
import type { StepReport } from './step-report.js';

/**
 * True when the text index is FTS5's, whose segments maintenance merges; a
 * tsvector's GIN index (capabilities.fullText 'tsvector') is PostgreSQL's
 * own to maintain, and has no messages_fts to send commands to.
 */
export function mergesFtsSegments(db: Database): boolean {
  return db.capabilities.fullText === 'fts5';
}

/** Index pages written per merge command: a few ms of writer lock on either driver. */
export const FTS_MERGE_PAGES = 64;

/** `levels`: merge full levels only; `all`: merge across levels (frees the space of deleted rows). */
export type FtsMergeKind = 'levels' | 'all';

/** Runs one bounded merge in its own write transaction; true when it did any work (more may remain). */
export function mergeFtsOnce(db: Database, kind: FtsMergeKind, state: ChunkState, report: StepReport): boolean {
  const pages = kind === 'levels' ? FTS_MERGE_PAGES : -FTS_MERGE_PAGES;
  const merged = timedTransaction(
    db,
    () => {
      const before = db.get<{ n: number }>('SELECT total_changes() AS n')?.n ?? 0;
      db.run(`INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ${pages})`);
      const after = db.get<{ n: number }>('SELECT total_changes() AS n')?.n ?? 0;
      // FTS5's documented test: a delta below 2 means the command found nothing to merge.
      return after - before >= 2;
    },
    state,
    report,
  );
  report.ftsMerges++;
  return merged;
}

/**
 * Merges full levels until none is left or the deadline passes, pausing
 * between transactions like every other chunked loop.
 */
export async function mergeFtsLevels(db: Database, pastDeadline: () => boolean, report: StepReport): Promise<void> {
  const state = initialChunkState();
  while (!pastDeadline()) {
    if (!mergeFtsOnce(db, 'levels', state, report)) return;
    await pauseAfter(state);
  }
  report.cutShort = true;
}
