/**
 * The backups agentbus keeps in `<data directory>/backups/` (written by
 * `agentbus backup` and before every schema upgrade), and the words that tell
 * a person how to put one back.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The backups folder inside a data directory. */
export function backupDir(dataDir: string): string {
  return join(dataDir, 'backups');
}

export interface Backup {
  /** Absolute path of the backup file. */
  readonly path: string;
  /** Its modification time (ms since the epoch): when it was written. */
  readonly mtimeMs: number;
  /** Its size in bytes. */
  readonly size: number;
}

/** Complete backups in the data directory's backups folder, newest first; empty when there are none (never throws). */
export function listBackups(dataDir: string): Backup[] {
  const dir = backupDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const backups: Backup[] = [];
  for (const name of names) {
    // A `.partial-<pid>` file is a backup still being written (or abandoned).
    if (!name.endsWith('.db')) continue;
    try {
      const st = statSync(join(dir, name));
      if (st.isFile() && st.size > 0) backups.push({ path: join(dir, name), mtimeMs: st.mtimeMs, size: st.size });
    } catch {
      // Removed meanwhile.
    }
  }
  return backups.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** How to restore `backup`, for a message: the one way, `agentbus restore` (it checks the backup and keeps the current file and its -wal aside). */
export function restoreSteps(backup: string): string {
  return `stop every agentbus process (close the agent sessions that run \`agentbus mcp\`), then run \`agentbus restore '${backup}'\``;
}
