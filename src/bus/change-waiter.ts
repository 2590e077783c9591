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
 * A direct message rings neither: it rings the bell of each addressee
 * (`<data>/bells/name-<hash>.bell`) and the direct bell (`bells/direct.bell`).
 * A waiting receive watches the bell of the name it waits as beside the
 * common one, so the agents a direct message is not for do not wake at all,
 * and a reader that shows every message (tail, the console) watches the
 * direct bell. Name bells are watched only while someone waits on them.
 *
 * On an engine whose capabilities say `wakeups: 'notify'` (PostgreSQL) the
 * bells are not files: the committing transaction NOTIFYs the keys of the
 * bells it rings (commit-wake.ts; bellKey below), delivered at commit, and
 * the waiter hears them from the database's wake source (listenTo), so a
 * commit on another machine wakes it. The poll stays the floor there too.
 * While it follows a wake source it watches no bell file and makes none
 * (nobody rings them there): the files' watches close when it starts.
 *
 * A wait is given as a duration, never as a wall-clock time: Node's timers
 * run on the monotonic clock, so setting the date back or forth neither
 * stretches nor cuts a wait.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, utimesSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WakeSource } from '../db/contract/driver.js';

/** receive's poll interval, the floor under every wake-up (docs/architecture.md, "Behaviour, briefly"): the longest a waiter sleeps without looking. */
export const POLL_INTERVAL_MS = 250;

/** The file a committing process touches to wake waiters in every process. */
export const BELL_FILE = 'agentbus.bell';

/** The directory of the name bells and the direct bell, in the data directory. */
export const BELLS_DIR = 'bells';

/** Which bell besides the common one: a display name's (its direct messages), or the direct bell (every direct message). */
export type Bell = { readonly name: string } | 'direct';

/** The key of the common bell in a notification's payload. */
export const COMMON_BELL_KEY = 'common';

/** The payload key that rings every bell: a listener that reconnected may have missed anything. */
export const EVERY_BELL_KEY = '*';

/** A bell's key: its file's name without `.bell`, and its word in a notification; a name is hashed, since display names may hold any printable character. */
export function bellKey(bell: Bell | undefined): string {
  if (bell === undefined) return COMMON_BELL_KEY;
  if (bell === 'direct') return 'direct';
  return `name-${createHash('sha256').update(bell.name).digest('hex').slice(0, 32)}`;
}

/** The keys of the bells a commit rings: the common one, or for a direct message the direct bell and each addressee's. */
export function bellKeys(addressees: readonly string[] | undefined): string[] {
  if (addressees === undefined) return [COMMON_BELL_KEY];
  return ['direct', ...addressees.map((name) => bellKey({ name }))];
}

/** The path of `bell` under `dataDir`. */
export function bellPath(dataDir: string, bell: Bell | undefined): string {
  if (bell === undefined) return join(dataDir, BELL_FILE);
  return join(dataDir, BELLS_DIR, `${bellKey(bell)}.bell`);
}

export interface ChangeWaiter {
  /**
   * Resolves at the first of: a hint that another process may have committed,
   * the poll interval, `maxMs` elapsing, or `signal` aborting. With `name`, a
   * ring of that name's bell (a direct message to it) is such a hint too.
   * Never rejects.
   */
  waitForChange(maxMs: number, signal?: AbortSignal, name?: string): Promise<void>;
  /** Starts watching `name`'s bell now, before a first look, so a ring before the first wait is heard. Optional: a waiter without it hears rings from its first wait on. */
  watchName?(name: string): void;
  /** Stops watching; later waits fall back to the poll. Idempotent. */
  close(): void;
}

/** A waiter of one process that also rings the bell and feeds listeners. */
export interface ChangeFeed extends ChangeWaiter {
  /**
   * Wakes waiters in every process: call after committing a transaction that
   * added messages. With `addressees` (a direct message) it rings their bells
   * and the direct bell instead of the common one. Never throws.
   */
  announce(addressees?: readonly string[]): void;
  /**
   * Calls `listener` on every hint of the common bell, and with `bell` on
   * that bell's rings too, until the returned function is called; listeners must not throw.
   */
  onChange(listener: () => void, bell?: Bell): () => void;
  /**
   * Hears the bells from `source` (a `wakeups: 'notify'` database's wake
   * source) instead of the one given before, and while it does watches no
   * bell file; undefined stops following and watches the files again. Called
   * again with each newly opened database; does nothing after close.
   */
  listenTo(source: WakeSource | undefined): void;
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

/** Creates `bell` (0600, its directory 0700) when missing; false when that failed. */
function createBell(bell: string): boolean {
  try {
    mkdirSync(dirname(bell), { recursive: true, mode: 0o700 });
    closeSync(openSync(bell, 'a', 0o600));
    return true;
  } catch {
    return false;
  }
}

function touch(bell: string): boolean {
  const now = new Date();
  try {
    utimesSync(bell, now, now);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  return createBell(bell);
}

/**
 * Touches `<dataDir>/agentbus.bell` (creating it when missing), or for a
 * direct message each addressee's bell and the direct bell; false when a touch failed.
 */
export function ringBell(dataDir: string, addressees?: readonly string[]): boolean {
  if (addressees === undefined) return touch(bellPath(dataDir, undefined));
  let rang = touch(bellPath(dataDir, 'direct'));
  for (const name of addressees) rang = touch(bellPath(dataDir, { name })) && rang;
  return rang;
}

/** One watched bell file: `hint` on each ring; follows the path when the file is removed or replaced. */
interface BellWatch {
  /** Starts watching if not watching yet (the file may have been missing, or the watch lost). */
  ensure(): void;
  /** Stops for good. */
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
 * The bells of names and of direct messages. Each is watched from the first
 * time it is needed until close, not only during waits: a ring between a
 * receive's look and its next wait must still be heard. A process needs the
 * bells of the names it holds, a handful.
 */
interface ExtraBells {
  /** Starts watching `bell` now if not yet (its file only while `files()` says so). */
  ensure(bell: Bell): void;
  /** Calls `wake` on each ring of `bell` until the returned function is called. */
  add(bell: Bell, wake: () => void): () => void;
  /** A ring heard from a wake source: the bell with key `key`, or every bell for EVERY_BELL_KEY. */
  ring(key: string): void;
  /** Closes the files' watches and keeps the waiters (a wake source rings them now). */
  unwatch(): void;
  close(): void;
}

interface ExtraBell {
  /** The file's watch, while bells are files. */
  watch: BellWatch | undefined;
  readonly wakers: Set<() => void>;
}

function extraBells(dataDir: string, files: () => boolean): ExtraBells {
  const watched = new Map<string, ExtraBell>();
  const entry = (bell: Bell): ExtraBell => {
    const key = bellKey(bell);
    let found = watched.get(key);
    if (found === undefined) {
      found = { watch: undefined, wakers: new Set<() => void>() };
      watched.set(key, found);
    }
    if (files()) {
      const { wakers } = found;
      found.watch ??= watchBell(bellPath(dataDir, bell), () => [...wakers].forEach((w) => w()));
      found.watch.ensure();
    }
    return found;
  };
  const unwatch = (): void => {
    for (const found of watched.values()) found.watch?.close();
    for (const found of watched.values()) found.watch = undefined;
  };
  return {
    ensure(bell) {
      entry(bell);
    },
    add(bell, wake) {
      const { wakers } = entry(bell);
      wakers.add(wake);
      return () => wakers.delete(wake);
    },
    ring(key) {
      const rung = key === EVERY_BELL_KEY ? [...watched.values()] : [watched.get(key)];
      for (const found of rung) for (const wake of [...(found?.wakers ?? [])]) wake();
    },
    unwatch,
    close() {
      unwatch();
      watched.clear();
    },
  };
}

/** The common bell's file watch, made while `files()` says bells are files and closed when they stop being. */
function commonBell(dataDir: string, hint: () => void, files: () => boolean): { ensure(): void; close(): void } {
  let watch: BellWatch | undefined;
  const ensure = (): void => {
    if (!files()) return;
    watch ??= watchBell(bellPath(dataDir, undefined), hint);
    watch.ensure();
  };
  ensure();
  return {
    ensure,
    close() {
      watch?.close();
      watch = undefined;
    },
  };
}

/**
 * Follows one wake source at a time (the function returned replaces the one
 * followed; undefined stops): each notification's keys ring the waiters the
 * bell files of those keys would.
 */
function notificationBells(hint: () => void, extra: ReturnType<typeof extraBells>): (source: WakeSource | undefined) => void {
  let unsubscribe: (() => void) | undefined;
  // A payload is the space-separated keys of the bells one commit rang.
  const heard = (payload: string): void => {
    for (const key of payload.split(' ')) {
      if (key === COMMON_BELL_KEY || key === EVERY_BELL_KEY) hint();
      if (key !== COMMON_BELL_KEY) extra.ring(key);
    }
  };
  return (source) => {
    unsubscribe?.();
    unsubscribe = source?.subscribe(heard);
  };
}

/** Whether a waiter's bells are files now, and whether it was closed (after which nothing is followed or watched). */
interface WaiterMode {
  files: boolean;
  closed: boolean;
}

/**
 * A waiter's listenTo: follows `source` (notificationBells), with the files'
 * watches closed while one is followed and made again when none is; nothing once closed.
 */
function switchingSource(
  follow: (source: WakeSource | undefined) => void,
  mode: WaiterMode,
  common: { ensure(): void; close(): void },
  extra: ExtraBells,
): (source: WakeSource | undefined) => void {
  return (source) => {
    if (mode.closed) return;
    follow(source);
    mode.files = source === undefined;
    if (mode.files) {
      common.ensure();
      return;
    }
    common.close();
    extra.unwatch();
  };
}

/**
 * A waiter woken by the bell of `<dataDir>`; one per process is enough. It
 * watches from creation, so a ring between a caller's look and its wait is
 * not lost; a name's bell from `watchName` (or the first wait on it) until
 * close. `everyDirect`: every wait and listener also wakes on the direct bell.
 */
export function createChangeWaiter(dataDir: string, pollMs = POLL_INTERVAL_MS, options: { everyDirect?: boolean; wakeSource?: WakeSource } = {}): ChangeFeed {
  const wakers = new Set<() => void>();
  const listeners = new Set<() => void>();
  const hint = (): void => {
    for (const wake of [...wakers]) wake();
    for (const listener of [...listeners]) listener();
  };
  // Bells are files until a wake source is followed, and after close neither is watched.
  const mode: WaiterMode = { files: options.wakeSource === undefined, closed: false };
  const common = commonBell(dataDir, hint, () => mode.files);
  const extra = extraBells(dataDir, () => mode.files);
  // A reader that shows every message (tail, the console) hears every direct message as it hears the common bell.
  if (options.everyDirect === true) extra.add('direct', hint);
  const follow = notificationBells(hint, extra);
  follow(options.wakeSource);
  const listenTo = switchingSource(follow, mode, common, extra);

  return {
    waitForChange(maxMs, signal, name) {
      common.ensure();
      return sleepFor(maxMs, pollMs, signal, (wake) => {
        wakers.add(wake);
        const leave = name === undefined ? undefined : extra.add({ name }, wake);
        return () => {
          wakers.delete(wake);
          leave?.();
        };
      });
    },
    watchName(name) {
      extra.ensure({ name });
    },
    announce(addressees) {
      ringBell(dataDir, addressees);
    },
    onChange(listener, bell) {
      common.ensure();
      // One entry per registration: the same function registered twice (plain, and with a bell) is removed once per remover.
      const entry = (): void => listener();
      listeners.add(entry);
      const leave = bell === undefined ? undefined : extra.add(bell, entry);
      return () => {
        listeners.delete(entry);
        leave?.();
      };
    },
    listenTo,
    close() {
      follow(undefined);
      mode.files = false;
      mode.closed = true;
      common.close();
      extra.close();
      wakers.clear();
      listeners.clear();
    },
  };
}
