/**
 * Busy waiting that wakes when the lock frees up. SQLite's default busy
 * handler sleeps on a fixed schedule (1, 2, 5 ... 100 ms) and only then looks
 * again, so a lock freed after 1 ms still costs up to 100 ms. This handler
 * sleeps in short Atomics.wait steps (no spinning) and returns as soon as the
 * lock that refused us is no longer held by a live owner, while keeping
 * SQLite's contract: give up (SQLITE_BUSY) once the busy timeout has passed,
 * measured on the monotonic clock (a wall-clock jump neither ends a wait
 * early nor makes it run past its timeout). Waiting also renews this
 * process's leases.
 */
import { LOCK_POLL_FIRST_MS, nextLockPoll } from '../../src/db/contract/lock-poll.js';
import { sleepSync } from '../../src/db/contract/sleep-sync.js';
import { settleReleases, type Refusal } from './lock-table.js';
import { liveness } from './owner-liveness.js';
import { count } from './vfs-stats.js';

/** Longest single wait before handing control back to SQLite for a retry. */
const MAX_WAIT_MS = 50;

/** What the busy wait needs from the file layer (NodeFsVfs). */
export interface BusyWaitSource {
  /** Takes (and forgets) what the last SQLITE_BUSY from a lock was waiting for. */
  takeRefusal(): Refusal | undefined;
  /** Pulls every open WAL index of this process, so the retry sees what changed. */
  refreshIndexes(): void;
}

/** Per connection: when the current busy episode started. */
export class BusyWaiter {
  /** Milliseconds a busy episode may last before SQLite gets SQLITE_BUSY. */
  timeoutMs: number;
  readonly #source: BusyWaitSource;
  #episodeStart = 0;

  constructor(timeoutMs: number, source: BusyWaitSource) {
    this.timeoutMs = timeoutMs;
    this.#source = source;
  }

  /** The sqlite3_busy_handler callback: 1 = retry, 0 = give up. */
  handle(attempt: number): number {
    const now = performance.now();
    if (attempt === 0) this.#episodeStart = now;
    const left = this.#episodeStart + this.timeoutMs - now;
    if (left <= 0) return 0;
    // The file layer keeps the last refusal per runtime, not per connection: after an SQLITE_BUSY
    // that no lock refused (SQLite's own, e.g. a snapshot gone stale) this may be another
    // connection's, and one of a connection closed since cannot be read (it failed the wait at
    // once). Such a wait only sleeps a little before the retry.
    const taken = this.#source.takeRefusal();
    const refusal = taken?.record.open === true ? taken : undefined;
    const conflicts = refusal?.conflicts;
    const until = now + Math.min(left, MAX_WAIT_MS);
    // Nothing held back while waiting: the owner waited for may be waiting for one of our releases.
    settleReleases();
    // Short steps first (lock-poll.ts). Jitter so that waiters woken by one release do not all
    // collide again.
    let step = LOCK_POLL_FIRST_MS;
    sleepSync(Math.random() * step);
    try {
      while (performance.now() < until) {
        liveness.tick();
        if (conflicts !== undefined && !(refusal as Refusal).record.othersHoldAny(conflicts, (refusal as Refusal).purpose)) break;
        sleepSync(step);
        step = nextLockPoll(step);
        if (conflicts === undefined && performance.now() - now >= 1 + attempt) break;
      }
      this.#source.refreshIndexes();
    } catch {
      // The connection was fenced while waiting: its next file-layer call reports it.
      return 0;
    }
    count('busy.wait');
    count('busy.ms', performance.now() - now);
    return 1;
  }
}
