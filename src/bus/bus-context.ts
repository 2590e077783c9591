/**
 * Everything a bus operation needs, passed in rather than reached for, so
 * tests drive operations with a real database, their own clock and config.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { ProcessIdentity } from '../db/processes/process-identity.js';
import type { Logger } from '../log.js';
import type { RateLimiter } from './rate-limiter.js';

export interface BusContext {
  /** The open agentbus database. */
  readonly db: Database;
  /** The validated configuration. */
  readonly config: Config;
  /** The time source: every timestamp the bus writes and every wait and expiry it measures comes from it. */
  readonly clock: Clock;
  /** Diagnostics sink; never given payloads or keys. */
  readonly log: Logger;
  /** This process's random owner token: every session row it holds carries it. */
  readonly owner: string;
  /** This process's identity, recorded on every session row it holds so others can tell when it is dead; undefined when unknown. */
  readonly processIdentity: ProcessIdentity | undefined;
  /** The `context` register uses when the caller gives none: the working directory's basename. */
  readonly defaultContext: string;
  /** The directory reservations resolve their repository from when the caller names none; when absent, callers must name one. */
  readonly workingDirectory?: string;
  /** Per-sender send limits, one instance per process; when absent, mutations are not rate limited. */
  readonly rateLimiter?: RateLimiter;
  /**
   * Called after a committed transaction added messages, to wake waiting
   * receivers (and inbox monitors) in every process at once; never throws.
   * With `addressees` (a direct message) only their bells and the direct bell
   * ring (see change-waiter.ts). When absent, waiters learn of the commit at the poll.
   * Called only on a `wakeups: 'bell-file'` engine: on 'notify' the transaction rang (commit-wake.ts).
   */
  readonly announce?: (addressees?: readonly string[]) => void;
}
