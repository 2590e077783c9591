/**
 * Waiting out another connection's lock in the native driver.
 *
 * node:sqlite offers only sqlite3_busy_timeout, whose handler sleeps on
 * SQLite's fixed schedule (1, 2, 5, 10 ... ms) and only then looks again: a
 * write lock a peer holds for a tenth of a millisecond costs the next writer
 * a millisecond or more, which halves a sender beside a live reader. So a
 * native connection runs with SQLite's timeout at 0 and waits here instead,
 * in short sleeps (lock-poll.ts), wherever a refused call can simply be
 * made again with nothing lost:
 *
 * - a call that failed with SQLITE_BUSY and left no transaction open (BEGIN,
 *   an autocommit statement, prepare): its failure changed nothing, exactly
 *   as when SQLite's own handler retries it inside the call;
 * - COMMIT, which keeps its transaction when refused, for a retry.
 *
 * Everywhere else SQLite's own handler waits as it did before (`sqlite`
 * below): text of several statements (those before the refused one are
 * applied), a checkpoint pragma (it reports busy in its row instead of
 * failing, after waiting), and a refusal inside an open transaction (made
 * again once under SQLite's handler: a refused statement is undone, and where
 * SQLite would not have waited, an upgrade, it refuses again at once).
 */
import { LOCK_POLL_FIRST_MS, nextLockPoll } from '../../src/db/contract/lock-poll.js';
import { sleepSync } from '../../src/db/contract/sleep-sync.js';

/** How a call waits on a busy lock: made again here, made again here as COMMIT, or under SQLite's own handler. */
export type WaitPolicy = 'retry' | 'commit' | 'sqlite';

/** A statement text without `;` but at its end cannot be two statements. */
const ONE_STATEMENT = /^[^;]*;?\s*$/;
const COMMIT = /^\s*(?:COMMIT|END)(?:\s+TRANSACTION)?\s*;?\s*$/i;
/** Checkpoints wait on readers and writers inside SQLite and report busy in their row. */
const CHECKPOINT = /^\s*PRAGMA\s+(?:\w+\.)?wal_checkpoint\b/i;

/** The policy for prepare() of `sql` and for running the prepared statement. */
export function statementPolicy(sql: string): WaitPolicy {
  if (CHECKPOINT.test(sql)) return 'sqlite';
  return COMMIT.test(sql) ? 'commit' : 'retry';
}

/** The policy for exec() of `sql`: a statement's, unless the text may hold several. */
export function execPolicy(sql: string): WaitPolicy {
  return ONE_STATEMENT.test(sql) ? statementPolicy(sql) : 'sqlite';
}

/** Whether `error` is node:sqlite's SQLITE_BUSY (any extended code). */
export function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 5;
}

/** What the wait needs from the connection. */
export interface LockWaitHost {
  /** Milliseconds a call may wait in all before its SQLITE_BUSY is thrown. */
  readonly busyTimeoutMs: number;
  /** True while SQLite has a transaction open. */
  inTransaction(): boolean;
  /** Runs `call` with SQLite's own busy handler set to busyTimeoutMs, then sets it back to 0. */
  underSqliteHandler<T>(call: () => T): T;
}

/** Runs `call` under `policy`; throws its error (node:sqlite's, unconverted) when it fails otherwise or waits past the timeout. */
export function waitingOnLocks<T>(host: LockWaitHost, policy: WaitPolicy, call: () => T): T {
  if (policy === 'sqlite') return host.underSqliteHandler(call);
  try {
    return call();
  } catch (error) {
    if (!isBusy(error)) throw error;
    if (policy === 'retry' && host.inTransaction()) return host.underSqliteHandler(call);
    return retried(host.busyTimeoutMs, call, error);
  }
}

/** Makes `call` again after short sleeps (jittered, so waiters woken together spread out) until it passes or the timeout has gone by. */
function retried<T>(timeoutMs: number, call: () => T, first: unknown): T {
  const deadline = performance.now() + timeoutMs;
  let step = LOCK_POLL_FIRST_MS;
  let last = first;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) throw last;
    sleepSync(Math.min(left, step * (0.5 + Math.random())));
    step = nextLockPoll(step);
    try {
      return call();
    } catch (error) {
      if (!isBusy(error)) throw error;
      last = error;
    }
  }
}
