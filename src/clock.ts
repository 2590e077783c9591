/**
 * Time as the bus sees it; passed in so tests can drive it.
 *
 * Two clocks, for two jobs. The wall clock (`now`) dates what people read and
 * what other processes and older agentbus versions read from rows; it jumps
 * when NTP steps it, a user sets the date, or a VM is restored. Every
 * duration, wait and expiry is measured on the monotonic clock instead, which
 * never jumps. Monotonic readings of two processes compare only when they
 * read the same clock: `monotonicDomain` says which one.
 */
import { readFileSync, readlinkSync } from 'node:fs';

export interface Clock {
  /** Milliseconds since the Unix epoch; may jump in either direction. */
  now(): number;
  /** Milliseconds on a clock that never jumps (not counting suspend on Linux); only differences mean anything. */
  monotonic(): number;
  /**
   * Processes whose clocks report the same domain read the same monotonic
   * clock, so their readings compare; undefined when no other process's
   * reading can be compared with this one's.
   */
  readonly monotonicDomain: string | undefined;
}

/**
 * CLOCK_MONOTONIC (what process.hrtime reads on Linux) is one clock for the
 * whole kernel boot, across pid namespaces (containers), unless a time
 * namespace offsets it: so a domain is the boot id plus the time namespace.
 * Elsewhere there is no boot id to tell two boots (or two machines) apart.
 */
function readMonotonicDomain(): string | undefined {
  let boot: string;
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim().replaceAll('-', '').toLowerCase();
  } catch {
    return undefined;
  }
  if (!/^[0-9a-f]{32}$/.test(boot)) return undefined;
  let time = 'none';
  try {
    const m = /^time:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/time'));
    if (m !== null) time = m[1]!;
  } catch (error) {
    // Kernels before 5.6 have no time namespaces, so nothing can offset the clock; any other failure leaves it unknown.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  return `${boot}.t${time}`;
}

let domain: string | undefined | null = null;

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => Number(process.hrtime.bigint() / 1_000_000n),
  get monotonicDomain() {
    if (domain === null) domain = readMonotonicDomain();
    return domain;
  },
};

/**
 * The scope in which `clock`'s monotonic readings compare: its domain, or,
 * without one, this process alone (named by its owner token).
 */
export function monotonicScope(clock: Clock, owner: string): string {
  return clock.monotonicDomain ?? `process:${owner}`;
}
