/**
 * What `status` and `doctor` say before the first `agentbus mcp`: which
 * driver (and so which lock protocol) a new database would get here, and why.
 */
import type { Config } from '../config.js';
import { newDatabaseDriver, type NewDatabaseDriver } from '../db/open/new-database-driver.js';

/** The decision for this configuration (the defaults when it could not be read). */
export function newDatabaseDriverFor(config: Config | undefined): Promise<NewDatabaseDriver> {
  return newDatabaseDriver(config?.driver ?? 'auto', config?.driverSource ?? { kind: 'default' });
}

/** One line: `wasm (lock protocol portable): auto: ...`; a null or missing driver means none can run. */
export function describeNewDatabaseDriver(driver: string | null | undefined, lockProtocol: string | null | undefined, why: string): string {
  return driver == null ? `no driver: ${why}` : `${driver} (lock protocol ${lockProtocol}): ${why}`;
}

/** doctor's `new_database` check: ok with the driver, a problem when none can run. */
export async function newDatabaseCheck(config: Config | undefined): Promise<{ name: string; status: 'ok' | 'problem'; message: string }> {
  const decision = await newDatabaseDriverFor(config);
  return {
    name: 'new_database',
    status: decision.driver === undefined ? 'problem' : 'ok',
    message: `a new database would get ${describeNewDatabaseDriver(decision.driver, decision.lockProtocol, decision.why)}`,
  };
}
