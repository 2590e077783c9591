/**
 * Opening the bus database for an admin command. Unlike `agentbus mcp`, an
 * admin command never creates the file: a missing database is reported, not
 * made. A command that only reads never upgrades the schema either
 * (src/db/open/schema-compatibility.ts says why).
 */
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { DriverCapabilities, LockProtocol, SqliteCapabilities } from '../db/contract/driver.js';
import { databasePath, openDatabase, openForInspection } from '../db/open/open-database.js';
import { readFileState, type FileState } from '../db/storage/file-header.js';
import { compareSchema, type SchemaComparison } from '../db/open/schema-compatibility.js';
import { olderSchemaMessage } from '../db/open/schema-messages.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../db/open/select-driver.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** An open bus: a SQLite file's (the default) or, for commands that also take a server bus, any engine's. */
export interface AdminDatabase<C extends DriverCapabilities = SqliteCapabilities> {
  /** The open database, migrated to the current schema. */
  readonly db: Database<C>;
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

/** The database opened for a look at its schema; the caller closes it. */
interface SchemaPeek {
  /** Its schema beside this agentbus's. */
  readonly schema: SchemaComparison;
  /** A connection opened without creating, upgrading or waiting (openForInspection). */
  readonly db: Database<SqliteCapabilities>;
  /** The file's lock protocol. */
  readonly protocol: LockProtocol;
}

async function openPeek(path: string): Promise<SchemaPeek | undefined> {
  const state = readFileState(path);
  if (state.kind !== 'agentbus') return undefined;
  const loaded = await loadDriver(DRIVER_FOR_PROTOCOL[state.protocol]);
  if (!loaded.ok) return undefined;
  const db = openForInspection(path, loaded.driver);
  if (typeof db === 'string') return undefined;
  try {
    return { schema: compareSchema(db), db, protocol: state.protocol };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * How the existing database's schema compares with this agentbus's, read
 * without creating, upgrading or waiting for anything; undefined when that
 * cannot be told now (no agentbus file, no driver for its protocol, another
 * process is setting it up): opening then says what is wrong, or waits.
 * Throws DbError `schema_newer` or `migration_edited` as opening would.
 */
export async function peekSchema(path: string): Promise<SchemaComparison | undefined> {
  const peek = await openPeek(path);
  peek?.db.close();
  return peek?.schema;
}

/** What a command that only reads found: the database open, or a schema behind this agentbus's (nothing opened). */
export type ReadingOpen =
  | { readonly kind: 'open'; readonly database: AdminDatabase }
  | { readonly kind: 'older'; readonly schema: SchemaComparison; readonly protocol: LockProtocol };

/**
 * Opens the existing database for a command that only reads, unless its
 * schema is behind this agentbus's: that is returned instead, with nothing
 * written, so running older agents are never locked out by a look at the
 * bus. The connection that looked serves the command (one open, not two)
 * unless the command also writes (`writes`: pragmas and the set-up lock of a
 * full open) or the driver setting names another driver (opening says so).
 */
export async function openIfCurrent(config: Config, io: CliIo, writes = false): Promise<ReadingOpen> {
  const peek = await openPeek(databasePath(config.data_directory));
  if (peek !== undefined) {
    // Never migrated (version 0): a new file or one that lost its schema, not an older
    // one; the full open below creates it or refuses it (lost-database.ts).
    if (peek.schema.version > 0 && peek.schema.pending.length > 0) {
      peek.db.close();
      return { kind: 'older', schema: peek.schema, protocol: peek.protocol };
    }
    if (peek.schema.version > 0 && !writes && (config.driver === 'auto' || config.driver === peek.db.capabilities.name)) {
      return { kind: 'open', database: { db: peek.db, schemaVersion: peek.schema.version } };
    }
    peek.db.close();
  }
  return { kind: 'open', database: await openAdminDatabase(config, io) };
}

/**
 * openIfCurrent for `command`, which refuses a schema behind this
 * agentbus's: CliError `refused`, its line starting `schema_older:`, saying
 * who upgrades it.
 */
export async function openReadingDatabase(config: Config, io: CliIo, command: string, writes = false): Promise<AdminDatabase> {
  const opened = await openIfCurrent(config, io, writes);
  if (opened.kind === 'open') return opened.database;
  throw olderSchemaRefusal(opened.schema, command);
}

/** A reading command's refusal of a schema behind this agentbus's, on a file or a server: CliError `refused`, its line starting `schema_older:`. */
export function olderSchemaRefusal(schema: SchemaComparison, command: string): CliError {
  return new CliError('refused', `schema_older: ${olderSchemaMessage(schema.version, schema.known, command)}`);
}
