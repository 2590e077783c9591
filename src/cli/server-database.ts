/**
 * Opening the bus for a command when `database_url` puts it on a PostgreSQL
 * server. What the file openers decide from the file (missing, older schema)
 * is decided here from the server's schema_migrations, read over a
 * connection that neither creates nor migrates anything: a command that only
 * reads never upgrades a server bus either (schema-compatibility.ts says why).
 * Loaded on demand (scripts/build.js): a SQLite user's commands never load
 * the postgres files.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { DriverCapabilities, SharingModel } from '../db/contract/driver.js';
import { connectPostgres, openPostgresBus, postgresMigrationsDir } from '../db/open/open-postgres.js';
import { connectionUrl } from '../db/open/postgres-url.js';
import { compareSchema, type SchemaComparison } from '../db/open/schema-compatibility.js';
import type { CliIo } from './cli-io.js';

/** Where a server bus is, for reports and messages. */
export interface ServerPlace {
  /** The database_url as the connection shows it (a password as ***). */
  readonly where: string;
  /** The driver's name, for display only. */
  readonly driver: string;
  /** Its sharing model (`server`). */
  readonly protocol: SharingModel;
}

/** What a look at the server found: the bus open at the current schema, a schema behind this agentbus's, or no bus yet. */
export type ServerLook =
  | { readonly kind: 'open'; readonly db: Database<DriverCapabilities>; readonly schemaVersion: number }
  | { readonly kind: 'older'; readonly schema: SchemaComparison; readonly place: ServerPlace }
  | { readonly kind: 'none'; readonly place: ServerPlace };

type ServerSettings = Pick<Config, 'database_url' | 'databaseUrlKey' | 'database_password_file' | 'database_password_env'> & { readonly database_url: string };

/**
 * Connects and compares the schema without writing; the connection serves
 * the command when the schema is current, else it is closed. Throws DbError
 * (cantopen for a bad URL, unavailable, permission, schema_newer, ...).
 */
export async function lookAtServer(config: ServerSettings): Promise<ServerLook> {
  const db = await connectPostgres({ url: connectionUrl(config) });
  const place: ServerPlace = { where: db.path, driver: db.capabilities.name, protocol: db.capabilities.lockProtocol };
  let schema: SchemaComparison;
  try {
    schema = compareSchema(db, postgresMigrationsDir());
  } catch (error) {
    db.close();
    throw error;
  }
  if (schema.version > 0 && schema.pending.length === 0) return { kind: 'open', db, schemaVersion: schema.version };
  db.close();
  return schema.version === 0 ? { kind: 'none', place } : { kind: 'older', schema, place };
}

/** The server bus opened as `agentbus mcp` opens it, migrating a schema behind this agentbus's; for commands that write. */
export async function upgradedServerDatabase(config: ServerSettings, io: CliIo): Promise<{ readonly db: Database<DriverCapabilities>; readonly schemaVersion: number }> {
  const { db, migrations } = await openPostgresBus({ ...config }, () => io.clock.now());
  return { db, schemaVersion: migrations.version };
}

/**
 * A connection to the server bus for a command that only reads what is
 * there whatever its schema (the commit guard), with its own bounds on a
 * lock wait and on one call, so a hook never hangs on a lost server.
 */
export async function connectServerBus(config: ServerSettings, bounds: { readonly busyTimeoutMs: number; readonly deadlineMs: number }): Promise<Database<DriverCapabilities>> {
  return connectPostgres({ url: connectionUrl(config), ...bounds });
}
