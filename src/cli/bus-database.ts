/**
 * Opening the bus for a console command (tail, post, search, memory, web):
 * the database must exist already (agents make it), and a missing one is
 * said plainly instead of being created. A command that only reads names
 * itself, and then never upgrades the schema (admin-database.ts).
 */
import type { Config } from '../config.js';
import { databaseExists, databaseState, openAdminDatabase, openReadingDatabase, type AdminDatabase } from './admin-database.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** A command that only reads the bus, and whether it writes at all. */
export interface ReadingUse {
  /** Its name, for messages: `tail`, `search`, ... */
  readonly command: string;
  /** True when it may also write (the web console posts); false for pure readers. */
  readonly writes: boolean;
}

/**
 * Opens the existing database; throws CliError `failed` when there is none
 * yet. `reading`, for a command that only reads the bus (and at most posts
 * to it, as the web console does), names it: the schema is then never
 * upgraded (refused, `schema_older`, when it is behind).
 */
export async function openBusDatabase(config: Config, io: CliIo, reading?: ReadingUse): Promise<AdminDatabase> {
  const { path, state } = databaseState(config);
  if (!databaseExists(state)) {
    throw new CliError('failed', `there is no bus database at ${path} yet; it is made when the first agent starts \`agentbus mcp\` (check --config or AGENTBUS_DATA_DIR)`);
  }
  return reading === undefined ? openAdminDatabase(config, io) : openReadingDatabase(config, io, reading.command, reading.writes);
}
