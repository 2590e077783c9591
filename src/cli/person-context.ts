/**
 * `agentbus post`'s person context: asPerson (src/bus/person-context.ts) on
 * the database opened for the command, a failed register as the command's
 * error.
 */
import { basename } from 'node:path';
import type { BusContext } from '../bus/bus-context.js';
import { ringBell } from '../bus/change-waiter.js';
import { asPerson } from '../bus/person-context.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import type { Config } from '../config.js';
import { embeddingPassSettled } from '../embeddings/embedding-pass.js';
import { createFileLogger } from '../log.js';
import { asCliError } from './bus-error-exit.js';
import { openBusDatabase } from './bus-database.js';
import type { CliIo } from './cli-io.js';

/**
 * asPerson on a database opened for this one operation, closed (with its log) afterwards. A
 * committed message rings the bell, as `agentbus mcp` does, so a peer's waiting receive, channel
 * push and inbox hear it at once rather than at the poll.
 */
export async function withPersonContext<T>(config: Config, io: CliIo, name: string, use: (ctx: BusContext, as: string) => Promise<T>): Promise<T> {
  const { db } = await openBusDatabase(config, io);
  const log = createFileLogger(config.data_directory, config.log_level);
  const announce = (addressees?: readonly string[]): void => {
    if (!ringBell(config.data_directory, addressees)) log.debug('ringing the bell failed: waiters hear this commit at the poll', { dataDir: config.data_directory });
  };
  try {
    return await asPerson(
      { db, config, clock: io.clock, log, defaultContext: basename(io.cwd) || 'unknown', rateLimiter: new RateLimiter(config), announce },
      name,
      use,
      asCliError,
    );
  } finally {
    await embeddingPassSettled(db);
    db.close();
    await log.close();
  }
}
