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
 * moment. Markers carry unique names (owner, realm and a lease stamp made
 * fresh for every attempt), so a gone owner's marker can be unlinked by anyone
 * without ever touching a live one's. A marker is gone when its owner is
 * certainly dead, or when it is another realm's and older than the lease
 * expiry (the mutex is held for microseconds: such a holder crashed or was
 * stopped; if it wakes up it finds its marker removed and fails).
 */
import { mkdirSync, openSync, closeSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { judgeLockOwner } from '../../src/db/lock-records/lock-owner-verdict.js';
import { currentStampMs, LEASE_EXPIRY_MS, LeaseWatch, type LeaseStamp } from '../../src/db/lock-records/owner-lease.js';
import { adminMarkerDir, formatAdminMarker, parseAdminMarker, type LockOwner } from '../../src/db/lock-records/portable-lock-files.js';
import { clockIsBoots } from '../../src/db/processes/process-identity.js';
import { sleepSync } from '../../src/db/contract/sleep-sync.js';
import { isThisProcess, liveness } from './owner-liveness.js';
import { count } from './vfs-stats.js';

/**
 * How long a contender waits for the admin lock before giving up: long
 * enough to outwait the expiry of a marker left by a crashed process of
 * another realm, which only watching can date.
 */
const ADMIN_TIMEOUT_MS = LEASE_EXPIRY_MS + 15_000;

/** Runs `fn` while holding the admin lock of `dbPath`; throws when it cannot be had in time. */
export function withAdminLock<T>(dbPath: string, owner: LockOwner, fn: () => T): T {
  const dir = adminMarkerDir(dbPath);
  const watch = new LeaseWatch();
  const start = performance.now();
  let blockedBy = '';
  for (let attempt = 0; ; attempt++) {
    liveness.tick();
    const mine = formatAdminMarker(owner, currentStampMs(), clockIsBoots());
    const marker = join(dir, mine);
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
      const other = parseAdminMarker(name);
      if (other !== undefined && !isGone(other.owner, other.lease, watch)) {
        rival = true;
        blockedBy = name;
        continue;
      }
      // A gone owner's (or a foreign) marker: its name is unique, so removing it cannot hit a live one.
      try {
        unlinkSync(join(dir, name));
      } catch {
        // Someone else removed it first.
      }
    }
    if (!rival) {
      let result: T;
      try {
        result = fn();
      } finally {
        dropMarker(marker);
      }
      return result;
    }
    dropMarker(marker);
    count('admin.backoff');
    if (performance.now() - start > ADMIN_TIMEOUT_MS) {
      throw new Error(
        `admin lock of ${dbPath} held for over ${ADMIN_TIMEOUT_MS} ms by ${blockedBy} in ${dir}; if no agentbus process runs (here or in a container sharing this directory), remove that file`,
      );
    }
    sleepSync(1 + Math.random() * Math.min(20, 2 + attempt));
  }
}

/** Removes this contender's marker; throws when someone else removed it (this process was stopped past the expiry). */
function dropMarker(marker: string): void {
  try {
    unlinkSync(marker);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(`the admin lock marker ${marker} was removed by another process while held (this process was stopped for longer than the lease); the operation may have clashed with another: reopen the database`);
  }
}

/** True when a rival's marker may be removed: its owner is certainly dead, or another realm's marker outlived the expiry. */
function isGone(owner: LockOwner, lease: LeaseStamp | undefined, watch: LeaseWatch): boolean {
  // This process is single-threaded and not inside the mutex now: a marker of its own is a leftover.
  if (isThisProcess(owner)) return true;
  const verdict = judgeLockOwner(owner, lease, false, watch, (p) => liveness.judgePid(p));
  return verdict.state === 'dead' || verdict.state === 'expired';
}
