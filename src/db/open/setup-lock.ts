/**
 * A lock that serialises creating and migrating one database file across
 * processes, honoured by both drivers. It is a directory made with mkdir
 * (atomic on every local file system) holding `lease` (the holder's lease
 * stamp, written first) and `owner` (its identity with realm, renamed into
 * place, so a reader sees no owner or a whole one).
 *
 * A lock is taken over when its owner is certainly dead (this realm's /proc
 * says so), when it belongs to another realm and its lease stamp is older
 * than the lease expiry, or when it has had no owner file for
 * OWNERLESS_GRACE_MS (a crash between mkdir and rename), each measured on a
 * monotonic clock. The lease is stamped once, when the lock is taken: the
 * holder may run a long synchronous step (a backup before an upgrade, a
 * migration) during which nothing can renew it, so another realm's process
 * may take over a lock held past the expiry. That is allowed because the set-up
 * steps are safe to repeat under SQLite's own locks (each migration re-checks
 * inside its own write transaction; creation's pragmas are idempotent): the
 * lock saves work, it does not guard data. A process of the holder's own
 * realm never takes over a live holder.
 *
 * Taking over renames the directory aside and checks it is the very one that
 * was judged (inode, times, owner text) before deleting it, and puts it back
 * otherwise, so a lock freshly made by someone else is never removed. Release
 * does the same, so a holder that was taken over never removes its
 * successor's lock.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { DbError } from '../contract/db-error.js';
import { describeVerdict, judgeLockOwner, type OwnerVerdict } from '../lock-records/lock-owner-verdict.js';
import { currentStampMs, LeaseWatch, type LeaseStamp } from '../lock-records/owner-lease.js';
import type { LockOwner } from '../lock-records/portable-lock-files.js';
import { clockIsBoots, currentProcess, formatProcessIdentity, monotonicMs, parseProcessIdentity } from '../processes/process-identity.js';
import { sleepSync } from '../contract/sleep-sync.js';

/** A directory without an owner file for this long was left by a crash between mkdir and rename. */
export const OWNERLESS_GRACE_MS = 5_000;

const OWNER = 'owner';
const LEASE = 'lease';

/** The set-up lock's directory beside a database; it holds `owner` = `<pid>-<start>@<boot>.<pidns>` and `lease`. */
export function setupLockDir(dbPath: string): string {
  return `${dbPath}.setup-lock`;
}

/** What a set-up lock directory looks like now. */
export type SetupLockView =
  /** No lock. */
  | { readonly kind: 'free' }
  /** A directory without an owner file, seen that way for `ownerlessMs` by this observer. */
  | { readonly kind: 'ownerless'; readonly ownerlessMs: number; readonly fingerprint: string }
  /** An owner file that does not parse (edited by hand, or another program's). */
  | { readonly kind: 'garbled'; readonly fingerprint: string }
  /** An owner, and the verdict on it. */
  | { readonly kind: 'owned'; readonly owner: LockOwner; readonly verdict: OwnerVerdict; readonly fingerprint: string };

/** An observer's memory of set-up lock directories (when each was first seen ownerless; lease stamps). */
export class SetupLockWatch {
  /** Lease stamps seen. */
  readonly leases = new LeaseWatch();
  #ownerless: { id: string; since: number } | undefined;

  /** Milliseconds this observer has seen directory `id` without an owner (0 at first sight). */
  ownerlessFor(id: string): number {
    const now = monotonicMs();
    if (this.#ownerless?.id === id) return now - this.#ownerless.since;
    this.#ownerless = { id, since: now };
    return 0;
  }
}

function fingerprintOf(st: Stats, ownerText: string): string {
  // Not ctime: renaming the directory aside changes it.
  return `${st.dev}:${st.ino}:${st.birthtimeMs}:${st.mtimeMs}:${ownerText}`;
}

function readLease(dir: string, owner: LockOwner): LeaseStamp | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, LEASE), 'utf8');
  } catch {
    return undefined;
  }
  const m = /^(\d+) ([b-])$/.exec(text.trim());
  return m === null ? undefined : { stampMs: Number(m[1]) >>> 0, bootClock: m[2] === 'b', realm: owner.realm };
}

/** Looks at the set-up lock of `dbPath`; never writes. */
export function inspectSetupLock(dbPath: string, watch: SetupLockWatch): SetupLockView {
  const dir = setupLockDir(dbPath);
  let st: Stats;
  try {
    st = statSync(dir);
  } catch {
    return { kind: 'free' };
  }
  let text: string;
  try {
    text = readFileSync(join(dir, OWNER), 'utf8');
  } catch {
    const fingerprint = fingerprintOf(st, '');
    return { kind: 'ownerless', ownerlessMs: watch.ownerlessFor(`${st.dev}:${st.ino}:${st.birthtimeMs}`), fingerprint };
  }
  const fingerprint = fingerprintOf(st, text);
  const identity = parseProcessIdentity(text);
  if (identity === undefined) return { kind: 'garbled', fingerprint };
  const owner: LockOwner = { ...identity, connection: 0 };
  return { kind: 'owned', owner, verdict: judgeLockOwner(owner, readLease(dir, owner), false, watch.leases), fingerprint };
}

/** True when the lock may be taken over (see the module comment). */
export function isTakeoverAllowed(view: SetupLockView): boolean {
  switch (view.kind) {
    case 'free':
      return false;
    case 'ownerless':
      return view.ownerlessMs > OWNERLESS_GRACE_MS;
    case 'garbled':
      return true;
    case 'owned':
      return view.verdict.state === 'dead' || view.verdict.state === 'expired';
  }
}

/** Why the lock is held, for a message: `pid 12`, `pid 13 in another pid namespace or machine, lease ...`. */
export function describeSetupLock(view: SetupLockView): string {
  switch (view.kind) {
    case 'free':
      return 'nobody';
    case 'ownerless':
      return `no owner yet (seen so for ${(view.ownerlessMs / 1000).toFixed(1)} s)`;
    case 'garbled':
      return 'an owner file that is not agentbus\'s';
    case 'owned':
      return describeVerdict(view.owner, view.verdict);
  }
}

/**
 * Removes the set-up lock directory only if it is still the one `fingerprint`
 * describes: renamed aside first, compared, then deleted, or put back.
 * Returns true when it removed that lock.
 */
export function removeSetupLockIf(dbPath: string, fingerprint: string): boolean {
  const dir = setupLockDir(dbPath);
  const aside = `${dir}.gone-${process.pid}-${currentStampMs()}-${Math.floor(Math.random() * 1e9)}`;
  try {
    renameSync(dir, aside);
  } catch {
    return false; // gone already (or a non-empty directory took its place)
  }
  let text = '';
  try {
    text = readFileSync(join(aside, OWNER), 'utf8');
  } catch {
    // ownerless
  }
  let same = false;
  try {
    same = fingerprintOf(statSync(aside), text) === fingerprint;
  } catch {
    same = false;
  }
  if (same) {
    rmSync(aside, { recursive: true, force: true });
    return true;
  }
  try {
    renameSync(aside, dir); // someone else's fresh lock: give it back
  } catch {
    // A third process made a new lock meanwhile; the displaced holder's set-up steps are safe to repeat.
    rmSync(aside, { recursive: true, force: true });
  }
  return false;
}

/**
 * Runs `fn` holding the set-up lock for `dbPath`, waiting up to `timeoutMs`
 * (monotonic). Throws DbError `setup_timeout` naming the lock directory and
 * its holder when it cannot be had.
 */
export function withSetupLock<T>(dbPath: string, timeoutMs: number, fn: () => T): T {
  const dir = setupLockDir(dbPath);
  const start = monotonicMs();
  const watch = new SetupLockWatch();
  const me = currentProcess();
  const ownerText = formatProcessIdentity(me);
  let pause = 1;
  for (;;) {
    let made = false;
    try {
      mkdirSync(dir, { mode: 0o700 });
      made = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (made) {
      try {
        // The lease first, then the owner: whoever sees the owner also finds its lease.
        writeFileSync(join(dir, LEASE), `${currentStampMs()} ${clockIsBoots() ? 'b' : '-'}`, { mode: 0o600 });
        writeFileSync(join(dir, `${OWNER}.tmp`), ownerText, { mode: 0o600 });
        renameSync(join(dir, `${OWNER}.tmp`), join(dir, OWNER));
        break;
      } catch (error) {
        // Taken over between mkdir and the owner file (this process was stopped that long): start again.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        continue;
      }
    }
    const view = inspectSetupLock(dbPath, watch);
    if (view.kind === 'free') continue;
    if (isTakeoverAllowed(view)) {
      removeSetupLockIf(dbPath, view.fingerprint);
      continue;
    }
    if (monotonicMs() - start >= timeoutMs) {
      throw new DbError(
        'setup_timeout',
        `another agentbus process (${describeSetupLock(view)}) has held ${dir} for over ${timeoutMs} ms while creating or upgrading the database; if no agentbus process is running (here or in a container sharing this directory), remove that directory or run \`agentbus doctor --fix\``,
      );
    }
    sleepSync(pause);
    pause = Math.min(pause * 2, 50);
  }
  try {
    return fn();
  } finally {
    releaseSetupLock(dbPath, ownerText);
  }
}

/** Removes this process's set-up lock, unless it was taken over (then the successor's stays). */
function releaseSetupLock(dbPath: string, ownerText: string): void {
  const dir = setupLockDir(dbPath);
  let st: Stats;
  let text: string;
  try {
    st = statSync(dir);
    text = readFileSync(join(dir, OWNER), 'utf8');
  } catch {
    return; // taken over and released by the successor, or removed
  }
  if (text !== ownerText) return;
  removeSetupLockIf(dbPath, fingerprintOf(st, text));
}
