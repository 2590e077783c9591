/**
 * Opening the bus for a console command (tail, post, search, memory): the
 * database must exist already (agents make it), and a missing one is said
 * plainly instead of being created.
 */
import type { Config } from '../config.js';
import { databaseExists, databaseState, openAdminDatabase, type AdminDatabase } from './admin-database.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** Opens the existing database; throws CliError `failed` when there is none yet. */
export async function openBusDatabase(config: Config, io: CliIo): Promise<AdminDatabase> {
  const { path, state } = databaseState(config);
  if (!databaseExists(state)) {
    throw new CliError('failed', `there is no bus database at ${path} yet; it is made when the first agent starts \`agentbus mcp\` (check --config or AGENTBUS_DATA_DIR)`);
  }
  return openAdminDatabase(config, io);
}
