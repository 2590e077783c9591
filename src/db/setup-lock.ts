/**
 * A lock that serialises creating and migrating one database file across
 * processes, honoured by both drivers. It is a directory made with mkdir
 * (atomic on every local file system) holding an `owner` file; a lock whose
 * owner died is removed by whoever finds it, never one whose owner lives.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DbError } from './db-error.js';
import {
  currentProcess,
  formatProcessIdentity,
  isCertainlyDead,
  parseProcessIdentity,
} from './process-identity.js';
import { sleepSync } from './sleep-sync.js';

/** A directory without an owner file older than this was left by a crash between mkdir and write. */
const OWNERLESS_GRACE_MS = 5_000;

function isStale(dir: string): boolean {
  let text: string;
  try {
    text = readFileSync(join(dir, 'owner'), 'utf8');
  } catch {
    try {
      return Date.now() - statSync(dir).mtimeMs > OWNERLESS_GRACE_MS;
    } catch {
      return false; // gone already
    }
  }
  const owner = parseProcessIdentity(text);
  return owner === undefined || isCertainlyDead(owner);
}

/** The set-up lock's directory beside a database; it holds `owner` = `<pid>-<start>`. */
export function setupLockDir(dbPath: string): string {
  return `${dbPath}.setup-lock`;
}

/**
 * Runs `fn` holding the set-up lock for `dbPath`, waiting up to `timeoutMs`.
 * Throws DbError `setup_timeout` naming the lock directory when it cannot be had.
 */
export function withSetupLock<T>(dbPath: string, timeoutMs: number, fn: () => T): T {
  const dir = setupLockDir(dbPath);
  const deadline = Date.now() + timeoutMs;
  let pause = 1;
  for (;;) {
    try {
      mkdirSync(dir, { mode: 0o700 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (isStale(dir)) {
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new DbError(
        'setup_timeout',
        `another agentbus process has held ${dir} for over ${timeoutMs} ms while creating or upgrading the database; if no agentbus process is running, remove that directory`,
      );
    }
    sleepSync(pause);
    pause = Math.min(pause * 2, 50);
  }
  try {
    // Written aside and renamed, so a reader sees no owner or a whole one, never
    // an empty file it would take for a dead owner.
    writeFileSync(join(dir, 'owner.tmp'), formatProcessIdentity(currentProcess()), { mode: 0o600 });
    renameSync(join(dir, 'owner.tmp'), join(dir, 'owner'));
    return fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
