/**
 * Waiting for another process to commit. A long-poll receive (and the inbox
 * monitor of `agentbus mcp`) sleeps here between looks at the database.
 *
 * Two hints wake a sleeper, both seen through one watch on the data
 * directory (the directory, not the files, because SQLite creates and removes
 * `-wal` as it pleases):
 * - the bell, `agentbus.bell`: a process that committed new messages touches
 *   it after the commit (`announce`), so a waiter woken by it finds them;
 * - `<db>-wal` and the main file, written by every commit. These fire while
 *   the writer is still writing frames, before the commit is visible (the
 *   WAL index in `-shm` is updated last, and native SQLite updates it through
 *   mmap, which no watch sees): a reader woken by the last frame write can
 *   look too early, find nothing and sleep until the poll. That was the
 *   missed wake behind a 250 ms p99; the bell is what makes a wake reliable.
 *   The WAL hint still covers writers that do not ring (older versions), but
 *   WAL_HINT_DELAY_MS late: a look in the middle of a commit finds nothing
 *   and contends with the writer for the WAL index, delaying the look the
 *   bell asks for.
 * The floor is the poll, so a missed or unsupported watch costs latency,
 * never a message. The watch never keeps a process alive.
 *
 * A wait is given as a duration, never as a wall-clock time: Node's timers
 * run on the monotonic clock, so setting the date back or forth neither
 * stretches nor cuts a wait.
 */
import { closeSync, openSync, utimesSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_FILE } from '../db/open-database.js';

/** The design's receive poll interval: the longest a waiter sleeps without looking. */
export const POLL_INTERVAL_MS = 250;

/** The file a committing process touches to wake waiters in every process. */
export const BELL_FILE = 'agentbus.bell';

/** How long after a WAL change (without a bell) waiters are woken: the commit is done by then. */
export const WAL_HINT_DELAY_MS = 25;

export interface ChangeWaiter {
  /**
   * Resolves at the first of: a hint that another process may have committed,
   * the poll interval, `maxMs` elapsing, or `signal` aborting. Never rejects.
   */
  waitForChange(maxMs: number, signal?: AbortSignal): Promise<void>;
  /** Stops watching; later waits fall back to the poll. Idempotent. */
  close(): void;
}

/** A waiter of one process that also rings the bell and feeds listeners. */
export interface ChangeFeed extends ChangeWaiter {
  /** Wakes waiters in every process: call after committing a transaction that added messages. Never throws. */
  announce(): void;
  /** Calls `listener` on every hint until the returned function is called; listeners must not throw. */
  onChange(listener: () => void): () => void;
}

function sleepFor(maxMs: number, pollMs: number, signal: AbortSignal | undefined, register?: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    let unregister: (() => void) | undefined;
    const done = (): void => {
      clearTimeout(timer);
      unregister?.();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, Math.min(pollMs, maxMs)));
    signal?.addEventListener('abort', done, { once: true });
    unregister = register?.(done);
  });
}

/** A waiter that only polls: for callers without a data directory to watch. */
export function createPollingWaiter(pollMs = POLL_INTERVAL_MS): ChangeWaiter {
  return { waitForChange: (maxMs, signal) => sleepFor(maxMs, pollMs, signal), close: () => undefined };
}

/** Touches `<dataDir>/agentbus.bell` (creating it 0600 when missing); false when that failed. */
export function ringBell(dataDir: string): boolean {
  const bell = join(dataDir, BELL_FILE);
  const now = new Date();
  try {
    utimesSync(bell, now, now);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  try {
    // Creating it is itself an event the watchers see.
    closeSync(openSync(bell, 'a', 0o600));
    return true;
  } catch {
    return false;
  }
}

/**
 * A waiter woken by commits to `<dataDir>/agentbus.db`; one per process is
 * enough. It watches from creation, so a commit between a caller's look and
 * its wait is not lost.
 */
export function createChangeWaiter(dataDir: string, pollMs = POLL_INTERVAL_MS): ChangeFeed {
  const wakers = new Set<() => void>();
  const listeners = new Set<() => void>();
  let watcher: FSWatcher | undefined;
  let walTimer: NodeJS.Timeout | undefined;
  let closed = false;
  // Only the bell, the WAL and the main file mark a commit or checkpoint;
  // `-shm` and lock files change on reads too and would wake readers in a loop.
  const written = new Set([DATABASE_FILE, `${DATABASE_FILE}-wal`]);

  const hint = (): void => {
    if (walTimer !== undefined) clearTimeout(walTimer);
    walTimer = undefined;
    for (const wake of [...wakers]) wake();
    for (const listener of [...listeners]) listener();
  };

  const ensureWatcher = (): void => {
    if (watcher !== undefined || closed) return;
    try {
      const w = watch(dataDir, { persistent: false }, (_event, filename) => {
        const name = filename?.toString();
        // Some platforms do not name the file: treat it as a bell.
        if (name === undefined || name === BELL_FILE) return hint();
        if (!written.has(name) || walTimer !== undefined) return;
        walTimer = setTimeout(hint, WAL_HINT_DELAY_MS);
        walTimer.unref();
      });
      w.on('error', () => {
        w.close();
        if (watcher === w) watcher = undefined;
      });
      w.unref();
      watcher = w;
    } catch {
      // No watch here (e.g. the platform or file system lacks it): the poll still works.
    }
  };
  ensureWatcher();

  return {
    waitForChange(maxMs, signal) {
      ensureWatcher();
      return sleepFor(maxMs, pollMs, signal, (wake) => {
        wakers.add(wake);
        return () => wakers.delete(wake);
      });
    },
    announce() {
      ringBell(dataDir);
    },
    onChange(listener) {
      ensureWatcher();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      watcher?.close();
      watcher = undefined;
      if (walTimer !== undefined) clearTimeout(walTimer);
      walTimer = undefined;
      wakers.clear();
      listeners.clear();
    },
  };
}
