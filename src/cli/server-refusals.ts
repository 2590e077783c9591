/**
 * What the commands that work on the SQLite file itself (backup, restore,
 * convert between lock protocols) say when database_url puts the bus on a
 * PostgreSQL server: they have no file to work on there, and the server's
 * own tools do the job (the driver declares `backup: 'external'`). Refused
 * (exit 3) before anything is read or written.
 */
import type { Config } from '../config.js';
import { urlWithoutPassword } from '../db/open/postgres-url.js';
import { CliError } from './cli-error.js';

/** The commands that work on the file, and what does their job on a server. */
const SERVER_WAY = {
  backup: (where: string) => `back the server's database up with PostgreSQL's tools: \`pg_dump --format=custom --file=agentbus.dump '${where}'\`, or its replication`,
  restore: (where: string) => `restore a dump with PostgreSQL's tools: \`pg_restore --clean --dbname='${where}' agentbus.dump\`, with every agentbus process stopped`,
  convert: () => 'the lock protocol is a property of a SQLite file; to move a local file onto the server, unset database_url and run `agentbus convert --to postgres URL`',
} as const;

/** The commands SERVER_WAY knows. */
export type FileCommand = keyof typeof SERVER_WAY;

/** CliError `refused` when the configured bus is on a server, else undefined; the URL is shown without its password. */
export function serverBusRefusal(config: Pick<Config, 'database_url' | 'databaseUrlKey'>, command: FileCommand): CliError | undefined {
  if (config.database_url === undefined) return undefined;
  const where = urlWithoutPassword(config.database_url);
  return new CliError(
    'refused',
    `the bus is on a PostgreSQL server (${config.databaseUrlKey} ${where}), not in a SQLite file: \`agentbus ${command}\` works on the file only; ${SERVER_WAY[command](where)}`,
  );
}
