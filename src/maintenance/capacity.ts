/**
 * Capacity (placeholder until the maintenance issue lands): the real version
 * evicts ordinary messages oldest first to get under the budget and throws
 * BusError capacity_exhausted when live memories fill it.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';

/** Makes room for a write of about `bytes` bytes, evicting inline if needed; called before the write transaction. */
export function ensureCapacity(_db: Database, _config: Config, _now: number, _bytes: number): void {}
