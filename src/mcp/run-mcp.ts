/**
 * One `agentbus mcp` process: config, log, database, the MCP server on the
 * given streams, the heartbeat and maintenance timers, and a clean shutdown
 * when the client closes stdin (maintenance and embedding work finished, the
 * lease and this process's names released).
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { BusContext } from '../bus/bus-context.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { openDatabase, prepareDataDir, type OpenedDatabase } from '../db/open-database.js';
import { createFileLogger } from '../log.js';
import { createMcpServer } from './mcp-server.js';
import type { ToolDefinition } from './tool-definition.js';
import type { ToolServices } from './tools/all-tools.js';
import { createChangeWaiter } from '../bus/change-waiter.js';
import { heartbeat, HEARTBEAT_INTERVAL_MS, releaseSessions } from '../bus/identity.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import { embeddingPassSettled, embeddingPassStep } from '../embeddings/embedding-pass.js';
import { createMaintenance } from '../maintenance/tick.js';

export interface McpProcessOptions {
  /** The JSON-RPC input stream (stdin of the process). */
  readonly stdin: Readable;
  /** The JSON-RPC output stream; nothing else is ever written to it. */
  readonly stdout: Writable;
  readonly config: Config;
  readonly clock: Clock;
  /** The working directory; its basename is the default register context. */
  readonly cwd: string;
  /** Builds the tool list from the process's shared services. */
  readonly tools: (services: ToolServices) => readonly ToolDefinition[];
  readonly version: string;
  /** Aborting it shuts the server down as if the client had closed stdin (SIGTERM from a harness). */
  readonly stop?: AbortSignal;
}

/** How long the database open waits for the client's first message before it starts anyway. */
const OPEN_AFTER_MS = 50;

/**
 * Serves until the client closes the input stream; resolves after shutdown.
 * The server answers the client's first message (initialize) before the
 * database opens: a harness waits for that answer and for tools/list, which
 * need no database, while loading a driver and opening the file take longer
 * (the wasm runtime most of all). Tool calls wait for the open. When the
 * database cannot be opened the connection closes and the error is thrown,
 * as before the change: the process prints it and exits 1.
 */
export async function runMcp(options: McpProcessOptions): Promise<void> {
  const { config } = options;
  const dataDir = prepareDataDir(config.data_directory);
  const log = createFileLogger(dataDir, config.log_level);
  const waiter = createChangeWaiter(dataDir);
  let opened!: (ctx: BusContext) => void;
  let failed!: (error: unknown) => void;
  const context = new Promise<BusContext>((resolve, reject) => {
    opened = resolve;
    failed = reject;
  });
  context.catch(() => undefined); // calls still waiting are dropped with the connection
  const server = createMcpServer({ context, log, tools: options.tools({ waiter }), version: options.version });
  const connection = server.serve(options.stdin, options.stdout);
  if (options.stop?.aborted) connection.close();
  else options.stop?.addEventListener('abort', () => connection.close(), { once: true });

  let wait: NodeJS.Timeout | undefined;
  await Promise.race([connection.firstMessage, new Promise<void>((resolve) => (wait = setTimeout(resolve, OPEN_AFTER_MS)))]);
  clearTimeout(wait);
  let db: OpenedDatabase['db'];
  let migrations: OpenedDatabase['migrations'];
  try {
    ({ db, migrations } = await openDatabase({ dataDir, driver: config.driver, now: () => options.clock.now() }));
  } catch (error) {
    failed(error);
    connection.close();
    options.stdin.destroy();
    waiter.close();
    await log.close();
    throw error;
  }
  log.info('mcp start', {
    pid: process.pid,
    driver: db.capabilities.name,
    sqlite: db.capabilities.sqliteVersion,
    schema: migrations.version,
    migrated: migrations.applied.join(',') || null,
  });
  const ctx: BusContext = {
    db,
    config,
    clock: options.clock,
    log,
    owner: randomUUID(),
    defaultContext: basename(options.cwd) || 'unknown',
    rateLimiter: new RateLimiter(config),
  };
  // The heartbeat keeps this process's names live; a failure (busy, reset) is
  // retried on the next beat, and a lost name surfaces as not_registered.
  const beat = setInterval(() => {
    try {
      heartbeat(ctx);
    } catch (error) {
      log.warn('heartbeat failed', { error: (error as Error).message });
    }
  }, HEARTBEAT_INTERVAL_MS);
  beat.unref();
  const maintenance = createMaintenance({
    db,
    config,
    clock: options.clock,
    log,
    owner: ctx.owner,
    steps: { embeddingPass: embeddingPassStep(ctx) },
  });
  maintenance.start();
  opened(ctx);
  await connection.closed;
  // Stop reading: after a stop signal the client may still hold the pipe open, which would keep the process alive.
  options.stdin.destroy();
  clearInterval(beat);
  waiter.close();
  await maintenance.stop();
  await embeddingPassSettled(db);
  try {
    releaseSessions(ctx);
  } catch (error) {
    // Busy or reset: the names then expire on their own after 30 s.
    log.warn('releasing sessions failed', { error: (error as Error).message });
  }
  db.close();
  log.info('mcp stop', { pid: process.pid });
  await log.close();
}
