/** What one maintenance step did, for `agentbus status`, logs and tests. */

/** The longest a maintenance transaction should hold the writer lock, so senders wait at most this; longer holds are counted. */
export const SLOW_LOCK_MS = 50;

export type StepName =
  | 'stale_sessions'
  | 'reservations'
  | 'expired_receipts'
  | 'idle_subscriptions'
  | 'retention'
  | 'tombstones'
  | 'capacity'
  | 'fts_merge'
  | 'vacuum'
  | 'embeddings';

export interface StepReport {
  /** Which step. */
  readonly name: StepName;
  /** Rows deleted (pages reclaimed, for `vacuum`). */
  rows: number;
  /** Write transactions committed; each held the writer lock once. */
  transactions: number;
  /** The longest single write transaction, in milliseconds. */
  maxLockMs: number;
  /** Write transactions that held the lock longer than SLOW_LOCK_MS. */
  slowTransactions: number;
  /** Bounded FTS merge transactions, the last of a run usually finding nothing to do (counted in `transactions` too). */
  ftsMerges: number;
  /** True when the tick deadline stopped this step before it finished; the next tick resumes it. */
  cutShort: boolean;
  /** True when the step did not start because the deadline had already passed. */
  skipped: boolean;
  /** Set when the step failed; the tick logs it and goes on with the next step. */
  error?: string;
}

export function emptyStep(name: StepName): StepReport {
  return { name, rows: 0, transactions: 0, maxLockMs: 0, slowTransactions: 0, ftsMerges: 0, cutShort: false, skipped: false };
}
