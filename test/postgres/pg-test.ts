/**
 * What postgres tests share: a database of their own on the project's
 * cluster (global-setup.ts), and connections closed after each test.
 */
import { afterEach, inject } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import type { Connection, DriverCapabilities } from '../../src/db/contract/driver.js';
import { loadPostgresDriver } from '../../src/db/open/select-driver.js';

const opened: { close(): void }[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

/** Closes `c` after the current test. */
export function closeAfterTest<T extends { close(): void }>(c: T): T {
  opened.push(c);
  return c;
}

/** A connection to `url` through the postgres driver, closed after the test. */
export async function connectPg(url: string, options: { busyTimeoutMs?: number; deadlineMs?: number } = {}): Promise<Connection<DriverCapabilities>> {
  const loaded = await loadPostgresDriver();
  if (!loaded.ok) throw new Error(loaded.reason);
  return closeAfterTest(loaded.driver.open(url, { busyTimeoutMs: options.busyTimeoutMs ?? 2_000, ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }) }));
}

let made = 0;

/** `url` with another database name. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A new empty database on `clusterUrl` (default: the project's cluster); resolves to its URL. */
export async function freshDatabase(clusterUrl: string = inject('pgUrl')): Promise<string> {
  const name = `agentbus_t${process.pid}_${++made}_${Date.now() % 100_000}`;
  const admin = new Database(await connectPg(clusterUrl));
  admin.exec(`CREATE DATABASE ${name}`);
  return withDatabase(clusterUrl, name);
}
