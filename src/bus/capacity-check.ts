/**
 * The capacity check of every write (send, memories): room is made by the
 * inline eviction of src/maintenance/capacity.ts; when none can be made, the
 * write is refused as a tool error that says what to change.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import { makeRoom, type EnsureCapacityOptions } from '../maintenance/capacity.js';
import { BusError } from './bus-error.js';

/** Makes room for a write of about `bytes` bytes (see makeRoom); throws BusError `capacity_exhausted` when there is none to make. */
export function ensureCapacity(db: Database, config: Config, now: number, bytes: number, options: EnsureCapacityOptions = {}): void {
  if (makeRoom(db, config, now, bytes, options)) return;
  throw new BusError(
    'capacity_exhausted',
    `the bus has no room for this write: live memories fill the ${config.sqlite_budget_mib} MiB budget and there are no ordinary messages left to evict; ` +
      `raise sqlite_budget_mib in ${config.configPath}, delete memories you no longer need, or run \`agentbus reset\``,
  );
}
