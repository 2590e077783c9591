/**
 * The lock files beside a database, read for `doctor` and `convert` without
 * joining any lock protocol (formats in src/db/open/setup-lock.ts and
 * src/db/lock-records/portable-lock-files.ts):
 * - `<db>.setup-lock/` (both drivers): a directory holding `owner` and `lease`;
 * - `<db>-locks` (portable protocol): one record per connection; pid 0 is a free record;
 * - `<db>-locks.d/` (portable protocol): admin markers named after their owners.
 * Every owner is judged as the drivers judge it (src/db/lock-records/lock-owner-verdict.ts):
 * by pid in this realm, by lease in another. Stale means certainly dead, or
 * another realm's owner whose lease expired (`--fix` then does what the
 * drivers do to it: revokes the lease, so a stopped owner fences itself when
 * it wakes). A live owner, or one that cannot be judged (an older agentbus
 * not visible here), is never stale.
 */
import { closeSync, constants as fsc, openSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describeVerdict, judgeLockOwner, type OwnerVerdict } from '../../../db/lock-records/lock-owner-verdict.js';
import { LeaseWatch, leaseReadableAtOnce, type LeaseStamp } from '../../../db/lock-records/owner-lease.js';
import {
  adminMarkerDir,
  formatOwner,
  isRevoked,
  lockTablePath,
  parseAdminMarker,
  readRecordHead,
  RECORD_SIZE,
  revokeLease,
  type LockOwner,
} from '../../../db/lock-records/portable-lock-files.js';
import { sleepSync } from '../../../db/contract/sleep-sync.js';
import {
  describeSetupLock,
  inspectSetupLock,
  isTakeoverAllowed,
  OWNERLESS_GRACE_MS,
  removeSetupLockIf,
  setupLockDir,
  SetupLockWatch,
  withSetupLock,
  type SetupLockView,
} from '../../../db/open/setup-lock.js';

export type LockKind = 'setup_lock' | 'lock_record' | 'admin_marker';

/** `alive`: runs. `dead`: certainly gone. `expired`: another realm's lease not renewed (crashed or stopped). `unknown`: cannot be judged. */
export type LockState = 'alive' | 'dead' | 'expired' | 'unknown';

export interface LockEntry {
  /** Which kind of lock. */
  readonly kind: LockKind;
  /** Names this very lock (its file, or the table and record index). */
  readonly id: string;
  /** The file or directory it lives in. */
  readonly path: string;
  /** Owner process id, in its own pid namespace (0 when unknown). */
  readonly pid: number;
  /** The judgement of its owner. */
  readonly state: LockState;
  /** True unless the owner is certainly gone: the lock must be respected. */
  readonly alive: boolean;
  /** True when the owner is judged by its lease (another pid namespace or machine). */
  readonly foreign: boolean;
  /** The owner and its judgement in words: `pid 12`, `pid 13 in another pid namespace or machine, lease last renewed 0.4 s ago or less`. */
  readonly owner: string;
}

export interface LockSurvey {
  /** Every lock found, live or stale. */
  readonly entries: readonly LockEntry[];
}

/** An observer's memory across re-reads of the lock files. */
class Watch {
  readonly leases = new LeaseWatch();
  readonly setup = new SetupLockWatch();
  /** Owners whose lease could not be dated at once (clocks not comparable) and have not been seen renewing yet. */
  undated = 0;
}

function entryOf(kind: LockKind, path: string, owner: LockOwner, verdict: OwnerVerdict, id = path): LockEntry {
  const state: LockState = verdict.state;
  return {
    kind,
    id,
    path,
    pid: owner.pid,
    state,
    alive: state !== 'dead',
    foreign: (verdict.state === 'alive' && verdict.by === 'lease') || verdict.state === 'expired',
    owner: describeVerdict(owner, verdict),
  };
}

function judged(owner: LockOwner, lease: LeaseStamp | undefined, revoked: boolean, watch: Watch): OwnerVerdict {
  const verdict = judgeLockOwner(owner, lease, revoked, watch.leases);
  if (verdict.state === 'alive' && verdict.by === 'lease' && lease !== undefined && !leaseReadableAtOnce(lease) && !watch.leases.sawRenewal(formatOwner(owner))) {
    watch.undated++;
  }
  return verdict;
}

function setupEntry(view: SetupLockView, dir: string): LockEntry[] {
  switch (view.kind) {
    case 'free':
      return [];
    case 'ownerless': {
      const stale = isTakeoverAllowed(view);
      const state: LockState = stale ? 'dead' : 'alive';
      return [{ kind: 'setup_lock', id: dir, path: dir, pid: 0, state, alive: !stale, foreign: false, owner: describeSetupLock(view) }];
    }
    case 'garbled':
      return [{ kind: 'setup_lock', id: dir, path: dir, pid: 0, state: 'dead', alive: false, foreign: false, owner: describeSetupLock(view) }];
    case 'owned':
      return [entryOf('setup_lock', dir, view.owner, view.verdict)];
  }
}

function surveySetupLock(dbPath: string, watch: Watch): LockEntry[] {
  return setupEntry(inspectSetupLock(dbPath, watch.setup), setupLockDir(dbPath));
}

function surveyLockTable(dbPath: string, watch: Watch): LockEntry[] {
  const path = lockTablePath(dbPath);
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return [];
  }
  const entries: LockEntry[] = [];
  for (let base = 0; base + RECORD_SIZE <= buf.length; base += RECORD_SIZE) {
    const head = readRecordHead(buf, base);
    if (head.owner.pid === 0) continue;
    const verdict = judged(head.owner, head.leased ? head.lease : undefined, isRevoked(head), watch);
    entries.push(entryOf('lock_record', path, head.owner, verdict, `${path}#${base / RECORD_SIZE}`));
  }
  return entries;
}

function surveyAdminMarkers(dbPath: string, watch: Watch): LockEntry[] {
  const dir = adminMarkerDir(dbPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((name) => {
    const marker = parseAdminMarker(name);
    if (marker === undefined) {
      // Not agentbus's: the drivers remove such files too.
      const path = join(dir, name);
      return { kind: 'admin_marker', id: path, path, pid: 0, state: 'dead', alive: false, foreign: false, owner: 'a file that is not an agentbus marker' };
    }
    return entryOf('admin_marker', join(dir, name), marker.owner, judged(marker.owner, marker.lease, false, watch));
  });
}

function surveyOnce(dbPath: string, watch: Watch): LockEntry[] {
  watch.undated = 0;
  return [...surveySetupLock(dbPath, watch), ...surveyLockTable(dbPath, watch), ...surveyAdminMarkers(dbPath, watch)];
}

/** Step between re-reads while watching leases. */
const WATCH_STEP_MS = 250;

/**
 * Every lock beside `dbPath`, with its owner's judgement. Never writes.
 * Owners of another realm whose clock cannot be compared with this one's are
 * watched for up to `watchMs` (they renew every second while they run), so
 * the survey can say they are alive.
 */
export function surveyLocks(dbPath: string, watchMs = 2_500): LockSurvey {
  const watch = new Watch();
  const start = performance.now();
  let entries = surveyOnce(dbPath, watch);
  while (watch.undated > 0 && performance.now() - start < watchMs) {
    sleepSync(WATCH_STEP_MS);
    entries = surveyOnce(dbPath, watch);
  }
  return { entries };
}

export interface ClearReport {
  /** Stale locks removed (or, for an expired lease, revoked). */
  readonly cleared: readonly LockEntry[];
  /** Stale locks left alone, with why. */
  readonly kept: readonly { readonly entry: LockEntry; readonly reason: string }[];
}

/** Revokes every expired lease in the lock table (as a driver that needs the lock would); returns how many. */
function revokeExpired(dbPath: string, watch: Watch): number {
  let fd: number;
  try {
    fd = openSync(lockTablePath(dbPath), fsc.O_RDWR);
  } catch {
    return 0;
  }
  let revoked = 0;
  try {
    const buf = readFileSync(lockTablePath(dbPath));
    const scratch = Buffer.alloc(RECORD_SIZE);
    for (let base = 0; base + RECORD_SIZE <= buf.length; base += RECORD_SIZE) {
      const head = readRecordHead(buf, base);
      if (head.owner.pid === 0 || !head.leased) continue;
      if (judgeLockOwner(head.owner, head.lease, isRevoked(head), watch.leases).state !== 'expired') continue;
      if (revokeLease(fd, base, head, scratch)) revoked++;
    }
  } finally {
    closeSync(fd);
  }
  return revoked;
}

/**
 * Removes stale locks where the protocol allows anyone to. The set-up lock:
 * when its owner is dead, its lease expired (its steps are safe to repeat),
 * or it stayed ownerless past the grace period (watched here). Admin markers:
 * when their owner is dead or another realm's marker is older than the lease
 * expiry. Lock-table records: expired leases are revoked (the owner fences
 * itself should it wake); the table is deleted only when no record in it
 * counts any more, under the set-up lock so that no process can open the
 * database meanwhile; otherwise dead records stay and the next connection to
 * open reuses them.
 */
export function clearStaleLocks(dbPath: string): ClearReport {
  const cleared: LockEntry[] = [];
  const kept: { entry: LockEntry; reason: string }[] = [];
  const watch = new Watch();
  const start = performance.now();

  // The set-up lock, by the same rules withSetupLock applies (an ownerless one is watched past the grace).
  for (;;) {
    const view = inspectSetupLock(dbPath, watch.setup);
    if (view.kind === 'free') break;
    if (isTakeoverAllowed(view)) {
      const [entry] = setupEntry(view, setupLockDir(dbPath));
      if (removeSetupLockIf(dbPath, view.fingerprint) && entry !== undefined) cleared.push(entry);
      break;
    }
    if (view.kind !== 'ownerless' || performance.now() - start > OWNERLESS_GRACE_MS + 2_000) break;
    sleepSync(WATCH_STEP_MS);
  }

  for (const entry of surveyAdminMarkers(dbPath, watch)) {
    if (entry.state !== 'dead' && entry.state !== 'expired') continue;
    try {
      unlinkSync(entry.path);
      cleared.push(entry);
    } catch {
      // removed by someone else meanwhile
    }
  }

  // Expired leases are revoked, as a driver needing their locks would; revoked records are gone for everyone.
  const expired = surveyLockTable(dbPath, watch).filter((e) => e.state === 'expired');
  if (expired.length > 0 && revokeExpired(dbPath, watch) > 0) {
    const gone = new Set(surveyLockTable(dbPath, watch).filter((e) => !e.alive).map((e) => e.id));
    cleared.push(...expired.filter((e) => gone.has(e.id)));
  }
  if (surveyLockTable(dbPath, watch).some((e) => !e.alive)) {
    withSetupLock(dbPath, 5_000, () => {
      const records = surveyLockTable(dbPath, watch);
      const markers = surveyAdminMarkers(dbPath, watch);
      const done = new Set(cleared.map((e) => e.id));
      if (records.some((e) => e.alive) || markers.some((e) => e.alive)) {
        for (const entry of records.filter((e) => !e.alive && !done.has(e.id))) {
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
      cleared.push(...records.filter((e) => !done.has(e.id)));
    });
  }
  return { cleared, kept };
}
