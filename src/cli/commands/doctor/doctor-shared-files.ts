/**
 * doctor's `shared_files` check: the files beside the database that every
 * agentbus process shares while it runs. Each must be readable and writable
 * by this user (a `-wal` or `-shm` left by agentbus run once as root stops
 * everyone else), and none may be deleted or moved by hand while agentbus
 * runs: processes started afterwards would make a new one and stop seeing the
 * others' commits.
 */
import { accessSync, constants } from 'node:fs';
import { basename, dirname } from 'node:path';
import { sharedFiles } from '../../../db/storage/shared-file-guard.js';
import { permissionAdvice } from '../../../db/storage/storage-error.js';
import type { Check } from './doctor-check.js';

/** What the checks of files inside the data directory say when they cannot look inside it. */
export const NOT_SEARCHABLE = 'cannot be checked: this user cannot look inside the data directory (see data_directory)';

/** True when this user may look up names in `dir`. */
export function searchable(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function checkSharedFiles(dbPath: string): Check {
  if (!searchable(dirname(dbPath))) return { name: 'shared_files', status: 'problem', message: NOT_SEARCHABLE };
  const present: string[] = [];
  for (const file of sharedFiles(dbPath)) {
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
      present.push(basename(file));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      return { name: 'shared_files', status: 'problem', message: permissionAdvice(file, code) };
    }
  }
  const rule = `never delete, move or copy over ${basename(dbPath)}, -wal, -shm or -locks by hand while agentbus runs (stop every agentbus process first)`;
  return { name: 'shared_files', status: 'ok', message: present.length === 0 ? rule : `${present.join(', ')}: ${rule}` };
}
