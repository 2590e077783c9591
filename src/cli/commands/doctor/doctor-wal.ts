/**
 * doctor's `wal` check: whether the `-wal` beside the database is one SQLite
 * will read whole (src/db/storage/wal-file.ts says what is normal after a crash and
 * what is damage). It must run before anything opens the database: the last
 * connection to close checkpoints and deletes the WAL, evidence included.
 */
import { sleepSync } from '../../../db/contract/sleep-sync.js';
import { inspectWal, type WalReport } from '../../../db/storage/wal-file.js';
import type { Check } from './doctor-check.js';
import { formatBytes } from '../../format.js';

/** The report twice, a moment apart, when the first looks damaged: a live writer can be caught between two frames. */
function settledReport(walPath: string): WalReport {
  const first = inspectWal(walPath);
  if (first.kind === 'ok' || first.kind === 'none') return first;
  sleepSync(200);
  const second = inspectWal(walPath);
  return JSON.stringify(second) === JSON.stringify(first) ? first : second;
}

export function checkWal(dbPath: string): Check {
  const walPath = `${dbPath}-wal`;
  let report: WalReport;
  try {
    report = settledReport(walPath);
  } catch (error) {
    return { name: 'wal', status: 'warn', message: `cannot read ${walPath}: ${(error as Error).message}` };
  }
  const keep = `keep a copy (\`cp ${walPath} ${walPath}.damaged\`) before any agentbus process starts or stops (the last to close deletes it), then restore a backup if those messages matter`;
  switch (report.kind) {
    case 'none':
      return { name: 'wal', status: 'ok', message: 'no -wal: every commit is in the database file' };
    case 'ok':
      return {
        name: 'wal',
        status: 'ok',
        message: `${report.commits} commit(s) in ${report.frames} frame(s) not yet copied into the database file (normal while agents run)`,
      };
    case 'bad_header':
      return {
        name: 'wal',
        status: 'warn',
        message: `the header of ${walPath} (${formatBytes(report.bytes)}) is not a valid WAL header, so SQLite ignores the whole file: commits in it that were not yet copied into the database are lost; ${keep}`,
      };
    case 'broken':
      return {
        name: 'wal',
        status: 'warn',
        message: `${walPath} is damaged: frame ${report.brokenFrame} fails its checksum, yet ${report.framesAfter} later frame(s) with ${report.commitsAfter} commit(s) were written after it; SQLite reads only the ${report.usableCommits} commit(s) before the break and silently drops the rest; ${keep}`,
      };
  }
}
