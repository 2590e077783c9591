/**
 * A slow but simple cross-process mutex for rare operations: claiming a
 * record in the lock table, and deciding whether the shared WAL index may be
 * trusted or must be rebuilt (the dead-man switch). It never guards a
 * transaction, so its cost (a create, a directory listing, an unlink) does
 * not matter.
 *
 * Each contender creates a marker named after itself in `<db>-locks.d/`, then
 * lists the folder. Two contenders both create before they look, so at most
 * one can see no rival; when both see each other both back off for a random
 * moment. Markers carry unique owner names, so a dead owner's marker can be
 * unlinked by anyone without ever touching a live one's.
 */
import { mkdirSync, openSync, closeSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { adminMarkerDir, formatOwner, parseOwner, type LockOwner } from '../../src/db/portable-lock-files.js';
import { sleepSync } from '../../src/db/sleep-sync.js';
import { isOwnerAlive } from './owner-liveness.js';
import { count } from './vfs-stats.js';

/** How long a contender waits for the admin lock before giving up. */
const ADMIN_TIMEOUT_MS = 15_000;

/** Runs `fn` while holding the admin lock of `dbPath`; throws when it cannot be had in time. */
export function withAdminLock<T>(dbPath: string, owner: LockOwner, fn: () => T): T {
  const dir = adminMarkerDir(dbPath);
  const mine = formatOwner(owner);
  const marker = join(dir, mine);
  const deadline = Date.now() + ADMIN_TIMEOUT_MS;
  for (let attempt = 0; ; attempt++) {
    let names: string[];
    try {
      closeSync(openSync(marker, 'w', 0o600));
      names = readdirSync(dir);
    } catch (error) {
      // The last closer removes the folder when it empties; make it again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      continue;
    }
    let rival = false;
    for (const name of names) {
      if (name === mine) continue;
      const other = parseOwner(name);
      if (other !== undefined && isOwnerAlive(other)) {
        rival = true;
        continue;
      }
      // A dead owner's (or a foreign) marker: its name is unique, so removing it cannot hit a live one.
      try {
        unlinkSync(join(dir, name));
      } catch {
        // Someone else removed it first.
      }
    }
    if (!rival) {
      try {
        return fn();
      } finally {
        unlinkSync(marker);
      }
    }
    unlinkSync(marker);
    count('admin.backoff');
    if (Date.now() > deadline) {
      throw new Error(`admin lock of ${dbPath} held by another process for over ${ADMIN_TIMEOUT_MS} ms`);
    }
    sleepSync(1 + Math.random() * Math.min(20, 2 + attempt));
  }
}
