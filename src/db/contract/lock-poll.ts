/**
 * How often a connection looks again at a lock another connection holds,
 * for both SQLite drivers' busy waits: most locks are held for a fraction of
 * a millisecond, so the first look comes after 50 µs and each later one
 * after twice the previous sleep, up to 0.5 ms (a flat 0.5 ms step made the
 * average wait for a write lock 0.7 ms; docs/performance.md, "Fourth round"
 * of issue 24).
 */

/** The first sleep before looking again. */
export const LOCK_POLL_FIRST_MS = 0.05;
/** The longest sleep between two looks. */
export const LOCK_POLL_MAX_MS = 0.5;

/** The sleep after `step`: twice it, at most LOCK_POLL_MAX_MS. */
export function nextLockPoll(step: number): number {
  return Math.min(step * 2, LOCK_POLL_MAX_MS);
}
