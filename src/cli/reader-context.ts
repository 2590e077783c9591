/**
 * The bus context of a console command that only reads (search, memory): an
 * owner token that holds no session, and the data directory's log. Nothing
 * is registered, so nothing needs releasing.
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { BusContext } from '../bus/bus-context.js';
import type { Config } from '../config.js';
import { createFileLogger } from '../log.js';
import { openBusDatabase } from './bus-database.js';
import type { CliIo } from './cli-io.js';

/**
 * Opens the existing database for `command` (never upgrading it: openBusDatabase),
 * runs `use` with a reader context, then closes the database and the log.
 */
export async function withReaderContext<T>(config: Config, io: CliIo, command: string, use: (ctx: BusContext) => Promise<T> | T): Promise<T> {
  const { db } = await openBusDatabase(config, io, { command, writes: false });
  const log = createFileLogger(config.data_directory, config.log_level);
  try {
    return await use({ db, config, clock: io.clock, log, owner: randomUUID(), processIdentity: undefined, defaultContext: basename(io.cwd) || 'unknown' });
  } finally {
    db.close();
    await log.close();
  }
}
