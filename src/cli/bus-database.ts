/**
 * Opening the bus for a console command (tail, post, search, memory, web):
 * the database must exist already (agents make it), and a missing one is
 * said plainly instead of being created. A command that only reads names
 * itself, and then never upgrades the schema (admin-database.ts). With
 * database_url the bus is on a server, opened by server-database.ts.
 */
import type { Config } from '../config.js';
import type { DriverCapabilities } from '../db/contract/driver.js';
import { databaseExists, databaseState, olderSchemaRefusal, openAdminDatabase, openReadingDatabase, type AdminDatabase } from './admin-database.js';
import { urlWithoutPassword } from '../db/open/postgres-url.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** A command that only reads the bus, and whether it writes at all. */
export interface ReadingUse {
  /** Its name, for messages: `tail`, `search`, ... */
  readonly command: string;
  /** True when it may also write (the web console posts); false for pure readers. */
  readonly writes: boolean;
}

/** The refusal of a command when the server a database_url names holds no bus yet. */
export function noServerBusMessage(where: string, key: string): string {
  return `there is no bus on ${where} yet; it is made when the first agent starts \`agentbus mcp\` with this ${key} (check ${key}, or the database it names)`;
}

/**
 * Opens the existing database; throws CliError `failed` when there is none
 * yet. `reading`, for a command that only reads the bus (and at most posts
 * to it, as the web console does), names it: the schema is then never
 * upgraded (refused, `schema_older`, when it is behind).
 */
export async function openBusDatabase(config: Config, io: CliIo, reading?: ReadingUse): Promise<AdminDatabase<DriverCapabilities>> {
  const opened = await openBusIfMade(config, io, reading);
  if (opened !== undefined) return opened;
  if (config.database_url !== undefined) throw new CliError('failed', noServerBusMessage(urlWithoutPassword(config.database_url), config.databaseUrlKey));
  const { path } = databaseState(config);
  throw new CliError('failed', `there is no bus database at ${path} yet; it is made when the first agent starts \`agentbus mcp\` (check --config or AGENTBUS_DATA_DIR)`);
}

/** openBusDatabase, but undefined while no agent has made the bus yet (the web console waits for one). */
export async function openBusIfMade(config: Config, io: CliIo, reading?: ReadingUse): Promise<AdminDatabase<DriverCapabilities> | undefined> {
  if (config.database_url !== undefined) return openServerBus({ ...config, database_url: config.database_url }, io, reading);
  if (!databaseExists(databaseState(config).state)) return undefined;
  return reading === undefined ? openAdminDatabase(config, io) : openReadingDatabase(config, io, reading.command, reading.writes);
}

async function openServerBus(config: Config & { readonly database_url: string }, io: CliIo, reading: ReadingUse | undefined): Promise<AdminDatabase<DriverCapabilities> | undefined> {
  // A file of its own in the bundle (scripts/build.js, ON_DEMAND).
  const { lookAtServer, upgradedServerDatabase } = await import('./server-database.js');
  const look = await lookAtServer(config);
  if (look.kind === 'open') return look;
  if (look.kind === 'none') return undefined;
  // Behind this agentbus: a reader refuses it as on a file; a writer upgrades it as `agentbus mcp` would.
  if (reading !== undefined) throw olderSchemaRefusal(look.schema, reading.command);
  return upgradedServerDatabase(config, io);
}
