/**
 * Leases: how an owner that cannot be judged by its pid (another pid
 * namespace, another boot, no /proc of its namespace here) is judged instead.
 *
 * The owner keeps writing a stamp, its CLOCK_MONOTONIC in milliseconds, into
 * its marker (at least every LEASE_RENEW_MS while it runs). An observer
 * measures how long the stamp has not moved, in two ways, both lower bounds
 * of the true time since the last renewal:
 * - when both clocks are the boot's own CLOCK_MONOTONIC (same boot, no time
 *   namespace), its own clock now minus the stamp, known at first sight;
 * - always, how long it has itself seen this very stamp unchanged, on its own
 *   monotonic clock (a fresh observer starts at 0).
 * A wall-clock jump moves neither. The owner counts as expired only when the
 * larger of the two passes LEASE_EXPIRY_MS; a live owner renews 30 times in
 * that span. What may then be done to an expired owner is the caller's rule
 * (see docs/drivers.md, "Owners in other realms").
 */
import { clockIsBoots, currentProcess, monotonicMs, type ProcessRealm } from '../processes/process-identity.js';

/** An owner renews its lease at least this often while its process runs. */
export const LEASE_RENEW_MS = 1_000;

/** A lease not renewed for longer than this has expired: 30 renewals missed. */
export const LEASE_EXPIRY_MS = 30_000;

/** A stamp written into a marker: the owner's monotonic clock, as a u32 of milliseconds. */
export interface LeaseStamp {
  /** The owner's CLOCK_MONOTONIC at its last renewal, milliseconds modulo 2^32. */
  readonly stampMs: number;
  /** True when the owner's clock was its boot's own (comparable with any such clock of the same boot). */
  readonly bootClock: boolean;
  /** The realm of the owner, whose boot the clock belongs to; undefined when unknown. */
  readonly realm: ProcessRealm | undefined;
}

/** This process's monotonic clock as a stamp value (u32 milliseconds). */
export function currentStampMs(): number {
  return monotonicMs() >>> 0;
}

/**
 * How long ago, at least, the stamp was written, read off this process's own
 * clock; undefined when the clocks cannot be compared (other boot, a time
 * namespace on either side, unknown realm).
 */
export function stampAgeMs(lease: LeaseStamp): number | undefined {
  if (!lease.bootClock || !clockIsBoots()) return undefined;
  const me = currentProcess().realm;
  if (lease.realm === undefined || me === undefined || lease.realm.boot !== me.boot) return undefined;
  const age = (currentStampMs() - lease.stampMs) >>> 0;
  // A stamp "from the future" (it raced this read) or one that wrapped: no information.
  return age > 0x7fffffff ? 0 : age;
}

/**
 * An observer's memory of lease stamps: since when (on this process's
 * monotonic clock) it has seen each owner's stamp unchanged. Forgetting is
 * always safe: it only makes owners look younger.
 */
export class LeaseWatch {
  readonly #seen = new Map<string, { stampMs: number; since: number; renewals: number }>();
  readonly #now: () => number;

  /** `now`: a monotonic clock in milliseconds (default: this process's). */
  constructor(now: () => number = monotonicMs) {
    this.#now = now;
  }

  /** Milliseconds this observer has seen `stampMs` unchanged for the owner `id` (0 at first sight or after a change). */
  unchangedFor(id: string, stampMs: number): number {
    const now = this.#now();
    const seen = this.#seen.get(id);
    if (seen !== undefined && seen.stampMs === stampMs) return now - seen.since;
    if (this.#seen.size >= 4096) this.#seen.clear();
    this.#seen.set(id, { stampMs, since: now, renewals: seen === undefined ? 0 : seen.renewals + 1 });
    return 0;
  }

  /** True once this observer has seen the owner `id` renew (its stamp change) at least once. */
  sawRenewal(id: string): boolean {
    return (this.#seen.get(id)?.renewals ?? 0) > 0;
  }

  /** Drops what was seen of `id` (its marker is gone). */
  forget(id: string): void {
    this.#seen.delete(id);
  }
}

/** The time since the owner `id` last renewed `lease`, as far as this observer can prove it. */
export function leaseAgeMs(id: string, lease: LeaseStamp, watch: LeaseWatch): number {
  return Math.max(stampAgeMs(lease) ?? 0, watch.unchangedFor(id, lease.stampMs));
}

/** True when the lease's age can be read off the clocks at once (same boot, both clocks the boot's own). */
export function leaseReadableAtOnce(lease: LeaseStamp): boolean {
  return stampAgeMs(lease) !== undefined;
}
