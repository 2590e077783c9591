/**
 * Opening the bus database for an admin command. Unlike `agentbus mcp`, an
 * admin command never creates the file: a missing database is reported, not
 * made.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { databasePath, openDatabase } from '../db/open-database.js';
import { readFileState, type FileState } from '../db/file-header.js';
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
