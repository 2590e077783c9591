/**
 * Opening a bus on a PostgreSQL server (database_url): the postgres driver,
 * then the migrations of sql/postgres/, compared with schema_migrations and
 * applied as for SQLite (src/db/open/migrations.ts): a newer schema is refused
 * before anything is written, and each migration runs in its own write
 * transaction, which takes the bus's writer lock and re-checks, so
 * concurrent openers apply it exactly once. What the SQLite opener does
 * about files (the data directory, the set-up lock, the header, backups
 * before an upgrade) has no counterpart here: the server serializes access,
 * and its backups are PostgreSQL's (pg_dump, replication).
 */
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';
import { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';
import type { DriverCapabilities } from '../contract/driver.js';
import { applyMigration, appliedMigrations, loadMigrations, pendingMigrations, type MigrationReport } from './migrations.js';
import { connectionUrl, type DatabasePasswordSettings } from './postgres-url.js';
import { loadPostgresDriver } from './select-driver.js';

export interface OpenPostgresOptions {
  /** The URL to connect with, password included (postgres-url.ts, connectionUrl). */
  readonly url: string;
  /** How long a statement waits on a lock, the writer lock included. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** How long one call may wait for the server's answer. Default busyTimeoutMs + 10 s. */
  readonly deadlineMs?: number;
  /** Where the migration files live; defaults to the package's `sql/postgres/`. */
  readonly migrationsDir?: string;
  /** The clock, in milliseconds since the epoch. */
  readonly now?: () => number;
}

export interface OpenedPostgres {
  readonly db: Database<DriverCapabilities>;
  /** True when this call found no schema and made it. */
  readonly created: boolean;
  readonly migrations: MigrationReport;
}

/** The PostgreSQL migrations shipped with the package. */
export function postgresMigrationsDir(): string {
  return join(packageRoot(), 'sql', 'postgres');
}

/** The connection settings of openPostgresDatabase, without what only migrating uses. */
export type ConnectPostgresOptions = Pick<OpenPostgresOptions, 'url' | 'busyTimeoutMs' | 'deadlineMs'>;

/**
 * Connects to the server without a round trip, migrating or creating
 * anything: for a look at a bus (doctor, status) that must not change it.
 * Throws DbError `driver_unavailable`; a wrong password or an unreachable
 * server fail at the first statement.
 */
export async function connectPostgres(options: ConnectPostgresOptions): Promise<Database<DriverCapabilities>> {
  const loaded = await loadPostgresDriver();
  if (!loaded.ok) throw new DbError('driver_unavailable', loaded.reason);
  const connection = loaded.driver.open(options.url, {
    busyTimeoutMs: options.busyTimeoutMs ?? 5_000,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  });
  return new Database(connection);
}

/** Connects, migrates and returns the bus's database; throws DbError (unavailable, permission, schema_newer, ...). */
export async function openPostgresDatabase(options: OpenPostgresOptions): Promise<OpenedPostgres> {
  const now = options.now ?? Date.now;
  const migrations = loadMigrations(options.migrationsDir ?? postgresMigrationsDir());
  const db = await connectPostgres(options);
  try {
    // The first round trip: a wrong password, an unreachable or too old server fail here.
    const applied = appliedMigrations(db);
    const pending = pendingMigrations(applied, migrations, db.capabilities.backup);
    const done: number[] = [];
    for (const migration of pending) {
      if (applyMigration(db, migration, now())) done.push(migration.version);
    }
    const version = Math.max(applied.at(-1)?.version ?? 0, ...pending.map((m) => m.version));
    return { db, created: applied.length === 0, migrations: { applied: done, version, backupPath: undefined } };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** openPostgresDatabase for the configured URL and password (postgres-url.ts): what `agentbus mcp` opens when database_url is set. */
export function openPostgresBus(settings: DatabasePasswordSettings, now: () => number): Promise<OpenedPostgres> {
  return openPostgresDatabase({ url: connectionUrl(settings), now });
}
