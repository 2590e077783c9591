/**
 * Making deletes free space in the full-text index. FTS5 records a delete as
 * a marker in a new segment, so evicting rows first *grows* messages_fts_data;
 * the space comes back only when segments are merged. Capacity eviction
 * therefore follows each chunk with a bounded incremental merge (the 'merge'
 * command with a negative page count merges across levels, a little at a time).
 */
import type { Database } from '../db/database.js';
import { timedTransaction, type ChunkState } from './chunks.js';
import type { StepReport } from './step-report.js';

/** Index pages written per merge command: about 8 ms of writer lock on the native driver. */
export const FTS_MERGE_PAGES = 64;

/** Runs one bounded merge in its own write transaction; true when it did any work (more may remain). */
export function mergeFtsOnce(db: Database, state: ChunkState, report: StepReport): boolean {
  return timedTransaction(
    db,
    () => {
      const before = db.get<{ n: number }>('SELECT total_changes() AS n')?.n ?? 0;
      db.run(`INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', ${-FTS_MERGE_PAGES})`);
      const after = db.get<{ n: number }>('SELECT total_changes() AS n')?.n ?? 0;
      // FTS5's documented test: a delta below 2 means the command found nothing to merge.
      return after - before >= 2;
    },
    state,
    report,
  );
}
