/**
 * The postgres driver: the Driver contract over a PostgreSQL server, through
 * the synchronous bridge (bridge.ts; docs/architecture.md, "An asynchronous
 * engine"). It is loaded only when a database_url selects it, from a bundle
 * file of its own (and the worker from another, which holds `pg`), so SQLite
 * users never load any of it. open() takes the URL, password included,
 * instead of a path; the connection's `path` is the URL without it.
 */
import { DbError } from '../../src/db/contract/db-error.js';
import type { Connection, Driver, DriverCapabilities, DriverLoadResult, OpenOptions } from '../../src/db/contract/driver.js';
import { Bridge } from './bridge.js';
import { POSTGRES_DIALECT } from './postgres-dialect.js';
import { PostgresConnection } from './postgres-connection.js';
import { redactedUrl } from './redacted-url.js';

/** The oldest PostgreSQL agentbus runs on (server_version_num): 14, the oldest release still supported upstream. */
export const MINIMUM_SERVER_VERSION = 140_000;

/** How long connecting may take before the call fails as `unavailable`. */
const CONNECT_TIMEOUT_MS = 5_000;

export const POSTGRES_CAPABILITIES: DriverCapabilities = {
  name: 'postgres',
  sqliteVersion: '',
  lockProtocol: 'server',
  wal: false,
  dialect: POSTGRES_DIALECT,
  fullText: 'tsvector',
  sizeOf: 'relations',
  wakeups: 'notify',
  backup: 'external',
};

/** Opens a connection: the worker starts now and connects on the first call. */
function open(url: string, options: OpenOptions): Connection<DriverCapabilities> {
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)) {
    throw new DbError('cantopen', 'the postgres driver opens a postgres:// URL');
  }
  const deadlineMs = options.deadlineMs ?? options.busyTimeoutMs + 10_000;
  const where = redactedUrl(url);
  const bridge = new Bridge(
    {
      url,
      // The server gives up on a statement just before the caller does, so the caller gets its precise error.
      statementTimeoutMs: Math.max(1, deadlineMs - 500),
      lockTimeoutMs: options.busyTimeoutMs,
      connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, deadlineMs),
      minimumServerVersion: MINIMUM_SERVER_VERSION,
    },
    where,
  );
  return new PostgresConnection(bridge, where, POSTGRES_CAPABILITIES, deadlineMs);
}

/** The driver; loading it cannot fail (the client library is inside the worker's bundle). */
export function loadPostgresDriver(): DriverLoadResult<DriverCapabilities> {
  const driver: Driver<DriverCapabilities> = { capabilities: POSTGRES_CAPABILITIES, open };
  return { ok: true, driver };
}
