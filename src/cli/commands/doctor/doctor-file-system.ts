/**
 * doctor's `file_system` check: whether the data directory is on a file
 * system where the lock protocols hold (src/db/storage/file-system-kind.ts).
 */
import { fileSystemOf } from '../../../db/storage/file-system-kind.js';
import type { Check } from './doctor-check.js';

/** The file_system check for the data directory `dir` (or its nearest existing parent). */
export function checkFileSystem(dir: string): Check {
  const verdict = fileSystemOf(dir);
  switch (verdict.kind) {
    case 'local':
      return { name: 'file_system', status: 'ok', message: `${dir} is on a local file system (${verdict.type})` };
    case 'unknown':
      return { name: 'file_system', status: 'ok', message: `not checked: ${verdict.why}; keep the data directory on a local disk` };
    case 'warn':
      return {
        name: 'file_system',
        status: 'warn',
        message: `${dir} is on ${verdict.why} (${verdict.type}); if it is not, set AGENTBUS_DATA_DIR to a directory on a local disk`,
      };
    case 'refused':
      return {
        name: 'file_system',
        status: 'problem',
        message: `${dir} is on ${verdict.why} (${verdict.type}), where neither SQLite's locks nor agentbus's hold and agentbus refuses to open the database; set AGENTBUS_DATA_DIR (or data_directory) to a directory on a local disk, e.g. ~/.local/share/agentbus`,
      };
  }
}
