/**
 * The driver a test file runs against, chosen by its vitest project. Test
 * files never loop over drivers: the same file runs once per project.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { Driver, DriverName, LockProtocol } from '../../src/db/contract/driver.js';
import { loadDriver } from '../../src/db/open/select-driver.js';
import { openDatabase, type OpenDatabaseOptions, type OpenedDatabase } from '../../src/db/open/open-database.js';

export function testDriverName(): DriverName {
  const name = process.env.AGENTBUS_TEST_DRIVER;
  if (name !== 'native' && name !== 'wasm') {
    throw new Error('AGENTBUS_TEST_DRIVER must be native or wasm; run the suite through vitest projects (npm test)');
  }
  return name;
}

/** The driver under test; fails the test (never skips) when it cannot load. */
export async function testDriver(): Promise<Driver> {
  const result = await loadDriver(testDriverName());
  if (!result.ok) throw new Error(`driver ${testDriverName()} is unavailable: ${result.reason}`);
  return result.driver;
}

/** The lock protocol the driver under test does not speak. */
export function otherProtocol(protocol: LockProtocol): LockProtocol {
  return protocol === 'posix' ? 'portable' : 'posix';
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory removed after the current test. */
export function tempDir(prefix = 'agentbus-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Opens (creating) an agentbus database with the driver under test. */
export function openTestDatabase(dataDir: string, options: Partial<OpenDatabaseOptions> = {}): Promise<OpenedDatabase> {
  return openDatabase({ dataDir, driver: testDriverName(), ...options });
}
