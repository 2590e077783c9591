/**
 * Maintenance under test: a real database per test and a maintenance runner
 * on it with no lock target unless told.
 */
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/contract/database.js';
import { createMemoryLogger } from '../../src/log.js';
import { createMaintenance, type Maintenance, type MaintenanceOptions } from '../../src/maintenance/tick.js';
import { openTestDatabase, tempDir } from './test-driver.js';

export const HOUR = 3_600_000;
/** The instant maintenance tests start their clocks at. */
export const T0 = Date.UTC(2026, 0, 1);

export async function testDb(): Promise<{ db: Database; dir: string }> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  return { db, dir };
}

export function maintenanceFor(db: Database, config: Config, clock: Clock, extra: Partial<MaintenanceOptions> = {}): Maintenance {
  return createMaintenance({ db, config, clock, log: createMemoryLogger(), owner: 'test-owner', processIdentity: undefined, lockTargetMs: Infinity, ...extra });
}
