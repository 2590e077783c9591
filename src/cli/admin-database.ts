/**
 * Opening the bus database for an admin command. Unlike `agentbus mcp`, an
 * admin command never creates the file: a missing database is reported, not
 * made. A command that only reads never upgrades the schema either
 * (src/db/schema-compatibility.ts says why).
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { databasePath, openDatabase, openForInspection } from '../db/open-database.js';
import { readFileState, type FileState } from '../db/file-header.js';
import { compareSchema, type SchemaComparison } from '../db/schema-compatibility.js';
import { olderSchemaMessage } from '../db/schema-messages.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../db/select-driver.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

export interface AdminDatabase {
  /** The open database, migrated to the current schema. */
  readonly db: Database;
  /** The schema version after opening. */
  readonly schemaVersion: number;
}

/** The database file path and what it looks like now; never writes. */
export function databaseState(config: Config): { readonly path: string; readonly state: FileState } {
  const path = databasePath(config.data_directory);
  return { path, state: readFileState(path) };
}

/** True when there is a database file with content to open. */
export function databaseExists(state: FileState): boolean {
  return state.kind !== 'missing' && state.kind !== 'empty';
}

/** Opens the existing database with the configured driver choice; throws DbError (protocol mismatch, foreign file, ...). */
export async function openAdminDatabase(config: Config, io: CliIo): Promise<AdminDatabase> {
  const { db, migrations } = await openDatabase({
    dataDir: config.data_directory,
    driver: config.driver,
    driverSource: config.driverSource,
    now: () => io.clock.now(),
  });
  return { db, schemaVersion: migrations.version };
}

/**
 * How the existing database's schema compares with this agentbus's, read
 * without creating, upgrading or waiting for anything; undefined when that
 * cannot be told now (no agentbus file, no driver for its protocol, another
 * process is setting it up): opening then says what is wrong, or waits.
 * Throws DbError `schema_newer` or `migration_edited` as opening would.
 */
export async function peekSchema(path: string): Promise<SchemaComparison | undefined> {
  const state = readFileState(path);
  if (state.kind !== 'agentbus') return undefined;
  const loaded = await loadDriver(DRIVER_FOR_PROTOCOL[state.protocol]);
  if (!loaded.ok) return undefined;
  const db = openForInspection(path, loaded.driver);
  if (typeof db === 'string') return undefined;
  try {
    return compareSchema(db);
  } finally {
    db.close();
  }
}

/**
 * Opens the existing database for `command`, which only reads: a schema
 * behind this agentbus is refused (CliError `refused`, its line starting
 * `schema_older:`, saying who upgrades it) before anything is written, so
 * running older agents are never locked out by a look at the bus.
 */
export async function openReadingDatabase(config: Config, io: CliIo, command: string): Promise<AdminDatabase> {
  const schema = await peekSchema(databasePath(config.data_directory));
  if (schema !== undefined && schema.pending.length > 0) {
    throw new CliError('refused', `schema_older: ${olderSchemaMessage(schema.version, schema.known, command)}`);
  }
  return openAdminDatabase(config, io);
}
