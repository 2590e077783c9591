/**
 * Waiting for another process to commit. A long-poll receive (and the inbox
 * monitor of `agentbus mcp`, `agentbus tail`, the web console) sleeps here
 * between looks at the database.
 *
 * What wakes a sleeper is the bell, `<data>/agentbus.bell`: a process that
 * committed new messages or a memory edit touches it after the commit
 * (`announce`), so a waiter woken by it finds the commit. Each waiter watches
 * that one file, not the data directory: in a directory watch every write to
 * `-shm` and to the wasm driver's lock table, by every process, is an event
 * delivered to every process (about 2,500 a second in a 40 sends/s soak with
 * four wasm servers, all to be filtered out in JavaScript). The WAL is not
 * watched either: it changes while the writer is still writing frames, before
 * the commit is visible, so a reader woken by it can look too early and find
 * nothing (the missed wakes behind a 250 ms p99, docs/performance.md). A
 * commit that does not ring (a registration, a subscription, an older
 * agentbus) is seen at the poll, the floor: a missed or unsupported watch
 * costs latency, never a message. The watch never keeps a process alive.
 *
 * Direct messages ring narrower bells (src/bus/announcer.ts): a commit that
 * added only direct messages touches `<data>/bells/<name>.bell` of each
 * addressee and `<data>/agentbus.direct.bell`, not the shared bell, so the
 * servers of names it is not for are not woken at all. A server watches the
 * bells of the names it holds (`watchNames`, kept by its inbox monitor);
 * readers of every message (`tail`, the web console) watch the direct bell.
 *
 * A wait is given as a duration, never as a wall-clock time: Node's timers
 * run on the monotonic clock, so setting the date back or forth neither
 * stretches nor cuts a wait.
 */
import { closeSync, mkdirSync, openSync, utimesSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';

/** The design's receive poll interval: the longest a waiter sleeps without looking. */
export const POLL_INTERVAL_MS = 250;

/** The file a committing process touches to wake waiters in every process. */
export const BELL_FILE = 'agentbus.bell';
/** The bell of every direct message, for readers of all of them (tail, the web console). */
export const DIRECT_BELL_FILE = 'agentbus.direct.bell';
/** The folder of the per-name bells. */
export const NAME_BELLS_DIR = 'bells';

/** `<dataDir>/bells/<name as base64url>.bell`: any display name (a `/` included) is one plain file name. */
export function nameBellPath(dataDir: string, name: string): string {
  return join(dataDir, NAME_BELLS_DIR, `${Buffer.from(name, 'utf8').toString('base64url')}.bell`);
}

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
  /** Also wakes on the bells of exactly these display names (the names this process holds), from now on. */
  watchNames(names: readonly string[]): void;
}

export interface ChangeWaiterOptions {
  /** Also wake on every direct message (a reader of all messages: tail, the web console). */
  readonly direct?: boolean;
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

/** Creates `bell` (0600, its folder 0700) when missing; false when that failed. */
function createBell(bell: string): boolean {
  try {
    closeSync(openSync(bell, 'a', 0o600));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  try {
    mkdirSync(dirname(bell), { recursive: true, mode: 0o700 });
    closeSync(openSync(bell, 'a', 0o600));
    return true;
  } catch {
    return false;
  }
}

/** Touches the bell file `bell` (creating it when missing); false when that failed. */
export function ringBellFile(bell: string): boolean {
  const now = new Date();
  try {
    utimesSync(bell, now, now);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  return createBell(bell);
}

/** Touches `<dataDir>/agentbus.bell` (creating it when missing); false when that failed. */
export function ringBell(dataDir: string): boolean {
  return ringBellFile(join(dataDir, BELL_FILE));
}

/** A watch of one bell file that follows the file at its path when it is removed or replaced. */
interface BellWatch {
  /** Starts watching if not watching (a failed watch is tried again here). */
  ensure(): void;
  close(): void;
}

function watchBell(bell: string, hint: () => void): BellWatch {
  let watcher: FSWatcher | undefined;
  let closed = false;
  const ensure = (): void => {
    if (watcher !== undefined || closed) return;
    const listen = (event: string): void => {
      // Removed or replaced: this watch follows the old file, which nobody rings again.
      // Watch the file at that path now (a ring may have made it: hear it as one).
      if (event === 'rename') {
        w.close();
        if (watcher === w) {
          watcher = undefined;
          ensure();
        }
      }
      hint();
    };
    // Assigned before any event can arrive: events come on a later turn of the event loop.
    let w: FSWatcher;
    try {
      try {
        w = watch(bell, { persistent: false }, listen);
      } catch (error) {
        // A file must exist to be watched; ringing would create it, and so may we.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !createBell(bell)) return;
        w = watch(bell, { persistent: false }, listen);
      }
    } catch {
      // No watch here (e.g. the platform or file system lacks it): the poll still works.
      return;
    }
    w.on('error', () => {
      w.close();
      if (watcher === w) watcher = undefined;
    });
    w.unref();
    watcher = w;
  };
  ensure();
  return {
    ensure,
    close() {
      closed = true;
      watcher?.close();
      watcher = undefined;
    },
  };
}

/**
 * A waiter woken by the bell of `<dataDir>` (and the direct bell with
 * `direct`, and the bells of the names given to watchNames); one per process
 * is enough. It watches from creation, so a ring between a caller's look and
 * its wait is not lost.
 */
export function createChangeWaiter(dataDir: string, pollMs = POLL_INTERVAL_MS, options: ChangeWaiterOptions = {}): ChangeFeed {
  const wakers = new Set<() => void>();
  const listeners = new Set<() => void>();
  let closed = false;

  const hint = (): void => {
    for (const wake of [...wakers]) wake();
    for (const listener of [...listeners]) listener();
  };
  const shared = [watchBell(join(dataDir, BELL_FILE), hint), ...(options.direct === true ? [watchBell(join(dataDir, DIRECT_BELL_FILE), hint)] : [])];
  const names = new Map<string, BellWatch>();
  const ensureAll = (): void => {
    for (const w of shared) w.ensure();
    for (const w of names.values()) w.ensure();
  };

  return {
    waitForChange(maxMs, signal) {
      ensureAll();
      return sleepFor(maxMs, pollMs, signal, (wake) => {
        wakers.add(wake);
        return () => wakers.delete(wake);
      });
    },
    announce() {
      ringBell(dataDir);
    },
    onChange(listener) {
      ensureAll();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    watchNames(held) {
      if (closed) return;
      const wanted = new Set(held);
      for (const [name, w] of names) {
        if (wanted.has(name)) continue;
        w.close();
        names.delete(name);
      }
      for (const name of wanted) if (!names.has(name)) names.set(name, watchBell(nameBellPath(dataDir, name), hint));
    },
    close() {
      closed = true;
      for (const w of [...shared, ...names.values()]) w.close();
      names.clear();
      wakers.clear();
      listeners.clear();
    },
  };
}
