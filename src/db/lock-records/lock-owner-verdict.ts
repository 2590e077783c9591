/**
 * The one judgement of a lock owner, shared by the wasm driver's lock table
 * and admin markers, the set-up lock, and `doctor`:
 * - an owner of this realm (same boot, same pid namespace) whose /proc this
 *   process can read is judged by pid and start time: alive or certainly dead;
 * - an owner of another realm (a container, a sandbox, another boot), or one
 *   this process cannot look up, is judged by its lease: alive while renewed,
 *   `expired` once not renewed for LEASE_EXPIRY_MS (never `dead`: what may be
 *   done to it is the caller's rule);
 * - an owner written by an agentbus before leases (`legacy`) is judged by pid
 *   when its realm is recorded and is this one; without a realm it is alive
 *   when this process's /proc shows that very pid and start time; otherwise
 *   it is `unknown`: never taken for dead.
 */
import { LEASE_EXPIRY_MS, leaseAgeMs, type LeaseStamp, type LeaseWatch } from './owner-lease.js';
import { formatOwner, ownerProcess, type LockOwner } from './portable-lock-files.js';
import { currentProcess, judgeProcess, type Liveness, type ProcessIdentity } from '../processes/process-identity.js';

export type OwnerVerdict =
  /** Runs: its pid says so, or it renewed its lease within the expiry (leaseAgeMs then says how long ago, at least). */
  | { readonly state: 'alive'; readonly by: 'pid' | 'lease' | 'legacy_pid'; readonly leaseAgeMs?: number }
  /** Certainly gone: this realm's /proc says so, or an observer revoked its expired lease. */
  | { readonly state: 'dead'; readonly by: 'pid' | 'revoked' }
  /** Another realm's owner that has not renewed its lease for leaseAgeMs > LEASE_EXPIRY_MS: crashed, or stopped. */
  | { readonly state: 'expired'; readonly leaseAgeMs: number }
  /** Written by an older agentbus (no lease; no realm, or another realm) and not visible here: cannot be judged at all. */
  | { readonly state: 'unknown'; readonly by: 'legacy' };

/** Judges a process by pid; the driver passes a cached variant. */
export type PidJudge = (owner: ProcessIdentity) => Liveness;

/**
 * Judges `owner`. `lease` is undefined for an owner of an agentbus before
 * leases; `revoked` says an observer revoked the lease (lock-table records).
 */
export function judgeLockOwner(
  owner: LockOwner,
  lease: LeaseStamp | undefined,
  revoked: boolean,
  watch: LeaseWatch,
  judgePid: PidJudge = judgeProcess,
): OwnerVerdict {
  // Revoked is final for everyone: the owner fences itself when it wakes up.
  if (lease !== undefined && revoked) return { state: 'dead', by: 'revoked' };
  if (owner.realm !== undefined) {
    const byPid = judgePid(ownerProcess(owner));
    if (byPid === 'alive') return { state: 'alive', by: 'pid' };
    if (byPid === 'dead') return { state: 'dead', by: 'pid' };
  }
  if (lease === undefined) {
    if (owner.realm === undefined) {
      // No realm recorded: only this realm's /proc showing the very same pid and start time is evidence.
      const here = judgePid({ pid: owner.pid, startTime: owner.startTime, realm: currentProcess().realm });
      if (here === 'alive' && owner.startTime !== 0) return { state: 'alive', by: 'legacy_pid' };
    }
    return { state: 'unknown', by: 'legacy' };
  }
  const age = leaseAgeMs(formatOwner(owner), lease, watch);
  return age > LEASE_EXPIRY_MS ? { state: 'expired', leaseAgeMs: age } : { state: 'alive', by: 'lease', leaseAgeMs: age };
}

/** A short text for messages: `alive (pid 12)`, `pid 13 in another pid namespace or machine, lease renewed 0.4 s ago`, ... */
export function describeVerdict(owner: LockOwner, verdict: OwnerVerdict): string {
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  switch (verdict.state) {
    case 'alive':
      if (verdict.by === 'lease') {
        return `pid ${owner.pid} in another pid namespace or machine, lease last renewed ${seconds(verdict.leaseAgeMs ?? 0)} ago or less`;
      }
      return verdict.by === 'legacy_pid' ? `pid ${owner.pid} (an older agentbus, running here)` : `pid ${owner.pid}`;
    case 'dead':
      return verdict.by === 'pid' ? `dead pid ${owner.pid}` : `pid ${owner.pid}, whose expired lease was revoked`;
    case 'expired':
      return `pid ${owner.pid} in another pid namespace or machine, lease last renewed ${seconds(verdict.leaseAgeMs)} ago (expired: crashed or stopped)`;
    case 'unknown':
      return `pid ${owner.pid} of an older agentbus (no lease), not running in this pid namespace`;
  }
}
