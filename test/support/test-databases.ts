/**
 * The postgres project's databases (AGENTBUS_TEST_DRIVER=postgres): each data
 * directory a test uses gets a database of its own on the project's throwaway
 * cluster (test/postgres/global-setup.ts, inject('pgUrl')), named when first
 * asked for and created when first opened, so that every process and spawned
 * server of one bus (one data directory) shares it, as they share the file on
 * SQLite. They reach it through `database_url` (AGENTBUS_DATABASE_URL), as a
 * user's configuration would. The databases are dropped after the file's
 * tests (WITH FORCE: a connection a test left open does not keep one).
 * Nothing here runs on the SQLite projects.
 */
import { resolve } from 'node:path';
import { afterAll, inject } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import type { DriverCapabilities } from '../../src/db/contract/driver.js';
import { loadPostgresDriver } from '../../src/db/open/select-driver.js';

/** True in the postgres project. */
export const ON_POSTGRES = process.env.AGENTBUS_TEST_DRIVER === 'postgres';

/** One named database of a data directory: its URL, and whether it exists yet. */
interface TestDatabase {
  readonly name: string;
  readonly url: string;
  created: boolean;
}

// Loaded before any test runs, so that naming and creating a database stay synchronous
// (the bridge's calls are), as testConfig and serverEnv are.
const loaded = ON_POSTGRES ? await loadPostgresDriver() : undefined;
const databases = new Map<string, TestDatabase>();
let admin: Database<DriverCapabilities> | undefined;
let made = 0;

function adminDatabase(): Database<DriverCapabilities> {
  if (loaded === undefined || !loaded.ok) throw new Error(`the postgres driver is unavailable: ${loaded?.reason ?? 'not the postgres project'}`);
  admin ??= new Database(loaded.driver.open(inject('pgUrl'), { busyTimeoutMs: 10_000 }));
  return admin;
}

function named(dataDir: string): TestDatabase {
  const key = resolve(dataDir);
  let database = databases.get(key);
  if (database === undefined) {
    const name = `agentbus_t${process.pid}_${++made}`;
    const url = new URL(inject('pgUrl'));
    url.pathname = `/${name}`;
    database = { name, url: url.toString(), created: false };
    databases.set(key, database);
  }
  return database;
}

/** The database_url of `dataDir`'s bus (not created yet: testDatabaseCreated does that). */
export function testDatabaseUrl(dataDir: string): string {
  return named(dataDir).url;
}

/** The database_url of `dataDir`'s bus, the database created on the cluster if it is not yet. */
export function testDatabaseCreated(dataDir: string): string {
  const database = named(dataDir);
  if (!database.created) {
    adminDatabase().exec(`CREATE DATABASE ${database.name}`);
    database.created = true;
  }
  return database.url;
}

if (ON_POSTGRES) afterAll(() => {
  if (admin === undefined) return;
  for (const database of databases.values()) {
    if (database.created) admin.exec(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
  }
  databases.clear();
  admin.close();
  admin = undefined;
});
