/**
 * Waiting for another process to commit. A long-poll receive sleeps here
 * between looks at the database. The hint is a watch on the data directory:
 * in WAL mode every commit writes `<db>-wal`, and the directory (not the
 * file) is watched because `-wal` is created and removed as SQLite pleases.
 * The floor is a 250 ms poll, so a missed or unsupported watch costs
 * latency, never a message. The watch never keeps a process alive.
 */
import { watch, type FSWatcher } from 'node:fs';
import { DATABASE_FILE } from '../db/open-database.js';

/** The design's receive poll interval: the longest a waiter sleeps without looking. */
export const POLL_INTERVAL_MS = 250;

export interface ChangeWaiter {
  /**
   * Resolves at the first of: a hint that another process may have committed,
   * the poll interval, `untilMs` (a Date.now() time), or `signal` aborting.
   * Never rejects.
   */
  waitForChange(untilMs: number, signal?: AbortSignal): Promise<void>;
  /** Stops watching; later waits fall back to the poll. Idempotent. */
  close(): void;
}

function sleepUntil(untilMs: number, pollMs: number, signal: AbortSignal | undefined, register?: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    let unregister: (() => void) | undefined;
    const done = (): void => {
      clearTimeout(timer);
      unregister?.();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, Math.min(pollMs, untilMs - Date.now())));
    signal?.addEventListener('abort', done, { once: true });
    unregister = register?.(done);
  });
}

/** A waiter that only polls: for callers without a data directory to watch. */
export function createPollingWaiter(pollMs = POLL_INTERVAL_MS): ChangeWaiter {
  return { waitForChange: (untilMs, signal) => sleepUntil(untilMs, pollMs, signal), close: () => undefined };
}

/** A waiter woken by commits to `<dataDir>/agentbus.db`; one per process is enough. */
export function createChangeWaiter(dataDir: string, pollMs = POLL_INTERVAL_MS): ChangeWaiter {
  const wakers = new Set<() => void>();
  let watcher: FSWatcher | undefined;
  let closed = false;
  // Only the WAL and the main file mark a commit or checkpoint; `-shm` and
  // lock files change on reads too and would wake readers in a loop.
  const relevant = new Set([DATABASE_FILE, `${DATABASE_FILE}-wal`]);

  const ensureWatcher = (): void => {
    if (watcher !== undefined || closed) return;
    try {
      const w = watch(dataDir, { persistent: false }, (_event, filename) => {
        if (filename !== null && !relevant.has(filename.toString())) return;
        for (const wake of [...wakers]) wake();
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

  return {
    waitForChange(untilMs, signal) {
      ensureWatcher();
      return sleepUntil(untilMs, pollMs, signal, (wake) => {
        wakers.add(wake);
        return () => wakers.delete(wake);
      });
    },
    close() {
      closed = true;
      watcher?.close();
      watcher = undefined;
      wakers.clear();
    },
  };
}
