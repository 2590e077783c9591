/**
 * The driver a test file runs against, chosen by its vitest project. Test
 * files never loop over drivers: the same file runs once per project.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { AnyDriverName, Driver, DriverName, LockProtocol } from '../../src/db/contract/driver.js';
import { loadDriver } from '../../src/db/open/select-driver.js';
import { openDatabase, type OpenDatabaseOptions, type OpenedDatabase } from '../../src/db/open/open-database.js';
import { openPostgresDatabase } from '../../src/db/open/open-postgres.js';
import { connectionUrl } from '../../src/db/open/postgres-url.js';
import { testDatabaseCreated } from './test-databases.js';

/** The driver of the current vitest project: native, wasm, or postgres (a database_url on the project's cluster). */
export function testDriverName(): AnyDriverName {
  const name = process.env.AGENTBUS_TEST_DRIVER;
  if (name !== 'native' && name !== 'wasm' && name !== 'postgres') {
    throw new Error('AGENTBUS_TEST_DRIVER must be native, wasm or postgres; run the suite through vitest projects (npm test)');
  }
  return name;
}

/** The SQLite driver of the current project, for tests of the file drivers (never run in the postgres project: vitest.config.ts). */
export function testFileDriverName(): DriverName {
  const name = testDriverName();
  if (name === 'postgres') throw new Error('a test of the SQLite file drivers ran in the postgres project: list it in test/postgres/not-on-postgres.ts');
  return name;
}

/** The settings a spawned agentbus process gets to reach the bus of `dataDir` with the project's driver. */
export function testDriverEnv(dataDir: string): Record<string, string> {
  const name = testDriverName();
  return name === 'postgres' ? { AGENTBUS_DATABASE_URL: testDatabaseCreated(dataDir) } : { AGENTBUS_DRIVER: name };
}

/**
 * What a process that is given only `dataDir` (a git hook's guard) needs
 * beside it to reach that bus: nothing for a file driver, which finds the
 * file there, the bus's AGENTBUS_DATABASE_URL on postgres.
 */
export function testBusEnv(dataDir: string): Record<string, string> {
  return testDriverName() === 'postgres' ? { AGENTBUS_DATABASE_URL: testDatabaseCreated(dataDir) } : {};
}

/** The driver under test; fails the test (never skips) when it cannot load. */
export async function testDriver(): Promise<Driver> {
  const result = await loadDriver(testFileDriverName());
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

/**
 * Opens (creating) an agentbus database with the driver under test. On
 * postgres: the data directory's database on the project's cluster
 * (test-databases.ts), through its database_url as `agentbus mcp` opens it;
 * its Database is typed as the SQLite one the callers expect, and the tests
 * that use what only a file has (its path, pragmas) do not run there
 * (test/postgres/not-on-postgres.ts).
 */
export async function openTestDatabase(dataDir: string, options: Partial<OpenDatabaseOptions> = {}): Promise<OpenedDatabase> {
  const name = testDriverName();
  if (name !== 'postgres') return openDatabase({ dataDir, driver: name, ...options });
  const { busyTimeoutMs, now, ...fileOnly } = options;
  const unknown = Object.keys(fileOnly);
  if (unknown.length > 0) throw new Error(`openTestDatabase: ${unknown.join(', ')} mean nothing on postgres`);
  const url = connectionUrl({ database_url: testDatabaseCreated(dataDir) });
  const opened = await openPostgresDatabase({ url, ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs }), ...(now === undefined ? {} : { now }) });
  return opened as unknown as OpenedDatabase;
}
