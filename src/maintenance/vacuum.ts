/**
 * Returning free pages to the file system: `PRAGMA incremental_vacuum` with
 * a fixed page count per tick, in small runs so each holds the writer lock
 * briefly. Usage (live pages) is unchanged by it; the file shrinks.
 */
import type { Database } from '../db/contract/database.js';
import { initialChunkState, pauseAfter, timedTransaction } from './chunks.js';
import type { StepReport } from './step-report.js';

/** Pages reclaimed per tick at most (16 MiB at the 4 KiB page size). */
export const VACUUM_PAGES_PER_TICK = 4096;

/** Pages per incremental_vacuum statement: one short hold of the writer lock each. */
export const VACUUM_PAGES_PER_RUN = 256;

/** Reclaims up to VACUUM_PAGES_PER_TICK free pages, stopping early at the deadline or an empty freelist. */
export async function vacuumStep(db: Database, pastDeadline: () => boolean, report: StepReport): Promise<void> {
  const state = initialChunkState();
  while (report.rows < VACUUM_PAGES_PER_TICK) {
    const free = Number(db.pragma('freelist_count'));
    if (free === 0) return;
    if (pastDeadline()) {
      report.cutShort = true;
      return;
    }
    // Asking for more pages than are free frees them all. The page count is
    // part of the SQL text, and every distinct text stays in the statement
    // cache: sized by the free count it would differ from tick to tick.
    const pages = Math.min(VACUUM_PAGES_PER_RUN, VACUUM_PAGES_PER_TICK - report.rows);
    // Statement.run steps until done; a single step would free only one page.
    timedTransaction(db, () => db.run(`PRAGMA incremental_vacuum(${pages})`), state, report);
    const freed = free - Number(db.pragma('freelist_count'));
    report.rows += freed;
    if (freed <= 0) return;
    await pauseAfter(state);
  }
}
