/**
 * What the embedding pass needs of its caller: the bus's context (a
 * BusContext is one) or the maintenance tick's, passed in so this layer,
 * below the operations, never imports them.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { Logger } from '../log.js';

export interface EmbeddingContext {
  /** The open agentbus database the vectors are stored in. */
  readonly db: Database;
  /** The validated configuration: the endpoint, model and key file come from it. */
  readonly config: Config;
  /** Deadlines and retry times are read on its monotonic clock. */
  readonly clock: Clock;
  /** Diagnostics sink; never given texts or keys. */
  readonly log: Logger;
}
