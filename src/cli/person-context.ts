/**
 * The bus context of a person who writes from the console (`agentbus post`,
 * the web console's post, reply, memory edit and delete): the name is
 * registered for the length of one operation and released afterwards, so
 * it is free again at once and the write goes through the tools' own code
 * (validation, idempotency, rate limit, inspection hook, capacity).
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { BusContext } from '../bus/bus-context.js';
import { ringBell } from '../bus/change-waiter.js';
import { register, releaseSessions } from '../bus/identity.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import type { Config } from '../config.js';
import { currentProcess } from '../db/process-identity.js';
import { embeddingPassSettled } from '../embeddings/embedding-pass.js';
import { createFileLogger } from '../log.js';
import { asCliError } from './bus-error-exit.js';
import { openBusDatabase } from './bus-database.js';
import type { CliIo } from './cli-io.js';

/** Registers `name` (or the suffixed name the bus gives when it is held) on `base`'s database, runs `use` as that name, then releases it. */
export async function asPerson<T>(base: Omit<BusContext, 'owner' | 'processIdentity'>, name: string, use: (ctx: BusContext, as: string) => Promise<T>): Promise<T> {
  // The process identity is recorded with the name, so the name is free at once if this process dies before releasing it.
  const ctx: BusContext = { ...base, owner: randomUUID(), processIdentity: currentProcess() };
  const { display_name: as } = await asCliError(() => register(ctx, { name }));
  try {
    return await use(ctx, as);
  } finally {
    releaseSessions(ctx);
  }
}

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
    );
  } finally {
    await embeddingPassSettled(db);
    db.close();
    await log.close();
  }
}
