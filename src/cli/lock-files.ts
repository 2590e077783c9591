/**
 * The lock files beside a database, read for `doctor` and `convert` without
 * joining any lock protocol (formats in src/db/setup-lock.ts and
 * src/db/portable-lock-files.ts):
 * - `<db>.setup-lock/` (both drivers): a directory holding `owner` = `<pid>-<start>`;
 * - `<db>-locks` (portable protocol): one record per connection; pid 0 is a free record;
 * - `<db>-locks.d/` (portable protocol): admin markers named after their owners.
 * A lock is stale when its owner process is dead. The drivers already ignore
 * stale locks (a dead owner never blocks anyone), so clearing them is tidying,
 * done only where the protocol lets anyone do it.
 */
import { readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { adminMarkerDir, lockTablePath, parseOwner, readRecordOwner, RECORD_SIZE } from '../db/portable-lock-files.js';
import { currentProcess, isCertainlyDead, parseProcessIdentity } from '../db/process-identity.js';
import { setupLockDir, withSetupLock } from '../db/setup-lock.js';

/** A setup lock directory with no owner file younger than this may be mid-creation (setup-lock.ts). */
const OWNERLESS_GRACE_MS = 5_000;

export type LockKind = 'setup_lock' | 'lock_record' | 'admin_marker';

export interface LockEntry {
  /** Which kind of lock. */
  readonly kind: LockKind;
  /** The file or directory it lives in. */
  readonly path: string;
  /** Owner process id (0 when unknown). */
  readonly pid: number;
  /** True when the owner runs. */
  readonly alive: boolean;
}

export interface LockSurvey {
  /** Every lock found, live or stale. */
  readonly entries: readonly LockEntry[];
}

function surveySetupLock(dbPath: string, now: number): LockEntry[] {
  const dir = setupLockDir(dbPath);
  let text: string;
  try {
    text = readFileSync(join(dir, 'owner'), 'utf8');
  } catch {
    try {
      const age = now - statSync(dir).mtimeMs;
      return [{ kind: 'setup_lock', path: dir, pid: 0, alive: age <= OWNERLESS_GRACE_MS }];
    } catch {
      return [];
    }
  }
  const owner = parseProcessIdentity(text);
  return [{ kind: 'setup_lock', path: dir, pid: owner?.pid ?? 0, alive: owner === undefined || !isCertainlyDead(owner) }];
}

function surveyLockTable(dbPath: string): LockEntry[] {
  const path = lockTablePath(dbPath);
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return [];
  }
  const entries: LockEntry[] = [];
  for (let base = 0; base + RECORD_SIZE <= buf.length; base += RECORD_SIZE) {
    const { pid, startTime } = readRecordOwner(buf, base);
    if (pid === 0) continue;
    entries.push({ kind: 'lock_record', path, pid, alive: !isCertainlyDead({ pid, startTime, realm: currentProcess().realm }) });
  }
  return entries;
}

function surveyAdminMarkers(dbPath: string): LockEntry[] {
  const dir = adminMarkerDir(dbPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((name) => {
    const owner = parseOwner(name);
    const alive = owner !== undefined && !isCertainlyDead({ ...owner, realm: currentProcess().realm });
    return { kind: 'admin_marker', path: join(dir, name), pid: owner?.pid ?? 0, alive };
  });
}

/** Every lock beside `dbPath`, with its owner's liveness. Never writes. */
export function surveyLocks(dbPath: string, now: number): LockSurvey {
  return { entries: [...surveySetupLock(dbPath, now), ...surveyLockTable(dbPath), ...surveyAdminMarkers(dbPath)] };
}

export interface ClearReport {
  /** Stale locks removed. */
  readonly cleared: readonly LockEntry[];
  /** Stale locks left alone, with why. */
  readonly kept: readonly { readonly entry: LockEntry; readonly reason: string }[];
}

/**
 * Removes stale locks where the protocol allows anyone to: a dead owner's
 * setup lock or admin marker. Dead records in the lock table are removed by
 * deleting the table, and only when no record in it is alive, under the
 * set-up lock so that no process can open the database meanwhile; otherwise
 * they stay (the next opener reuses them).
 */
export function clearStaleLocks(dbPath: string, now: number): ClearReport {
  const cleared: LockEntry[] = [];
  const kept: { entry: LockEntry; reason: string }[] = [];
  for (const entry of surveySetupLock(dbPath, now)) {
    if (entry.alive) continue;
    rmSync(entry.path, { recursive: true, force: true });
    cleared.push(entry);
  }
  for (const entry of surveyAdminMarkers(dbPath)) {
    if (entry.alive) continue;
    try {
      unlinkSync(entry.path);
      cleared.push(entry);
    } catch {
      // removed by someone else meanwhile
    }
  }
  const dead = surveyLockTable(dbPath).filter((e) => !e.alive);
  if (dead.length > 0) {
    withSetupLock(dbPath, 5_000, () => {
      const records = surveyLockTable(dbPath);
      const markers = surveyAdminMarkers(dbPath);
      if (records.some((e) => e.alive) || markers.some((e) => e.alive)) {
        for (const entry of records.filter((e) => !e.alive)) {
          kept.push({ entry, reason: 'live connections share the lock table; the next connection to open reuses this record' });
        }
        return;
      }
      rmSync(lockTablePath(dbPath), { force: true });
      try {
        rmdirSync(adminMarkerDir(dbPath));
      } catch {
        // absent or not empty
      }
      cleared.push(...records);
    });
  }
  return { cleared, kept };
}
