/**
 * doctor's `disk` check: room left on the file system holding the data
 * directory. A full disk stops every write; a nearly full one (less room than
 * the capacity budget still lets the database grow) will stop them later.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../../../config.js';
import { databasePath } from '../../../db/open/open-database.js';
import { DISK_FULL_BYTES, diskSpace } from '../../../db/storage/disk-space.js';
import type { Check } from './doctor-check.js';
import { formatBytes } from '../../format.js';

const MIB = 1024 * 1024;
/** Room kept on top of the budget: the WAL between checkpoints and an upgrade backup. */
const HEADROOM_BYTES = 64 * MIB;

/** The nearest existing directory at or above `dir` (the data directory may not exist yet). */
function existingAncestor(dir: string): string {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

export function checkDisk(dataDir: string, config: Config | undefined): Check {
  const at = existingAncestor(dataDir);
  const space = diskSpace(at);
  if (space === undefined) return { name: 'disk', status: 'ok', message: `free space on the disk holding ${dataDir} cannot be read here` };
  const free = `${formatBytes(space.availableBytes)} free of ${formatBytes(space.totalBytes)}`;
  if (space.freeInodes === 0) {
    return { name: 'disk', status: 'problem', message: `the file system holding ${dataDir} has no free inode left (${free}): no file can be created; delete files there` };
  }
  if (space.availableBytes < DISK_FULL_BYTES) {
    return {
      name: 'disk',
      status: 'problem',
      message: `the disk holding ${dataDir} is full (${free}): agentbus cannot store messages until space is freed there (\`df -h ${at}\`)`,
    };
  }
  let dbBytes = 0;
  try {
    dbBytes = statSync(databasePath(dataDir), { throwIfNoEntry: false })?.size ?? 0;
  } catch {
    // Not searchable by this user: the data_directory check says so.
  }
  const budget = (config?.sqlite_budget_mib ?? 2048) * MIB;
  const growth = Math.max(0, budget - dbBytes) + HEADROOM_BYTES;
  if (space.availableBytes < growth) {
    return {
      name: 'disk',
      status: 'warn',
      message: `the disk holding ${dataDir} is nearly full (${free}): the database may still grow by ${formatBytes(growth)} (sqlite_budget_mib ${budget / MIB} plus WAL and backup room); free space there or lower sqlite_budget_mib`,
    };
  }
  return { name: 'disk', status: 'ok', message: free };
}
