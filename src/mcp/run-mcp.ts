/**
 * One `agentbus mcp` process: config, log, database, the MCP server on the
 * given streams, the heartbeat and maintenance timers, and a clean shutdown
 * when the client closes stdin.
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { BusContext } from '../bus/bus-context.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { openDatabase, prepareDataDir } from '../db/open-database.js';
import { createFileLogger } from '../log.js';
import { createMcpServer } from './mcp-server.js';
import type { ToolDefinition } from './tool-definition.js';

export interface McpProcessOptions {
  /** The JSON-RPC input stream (stdin of the process). */
  readonly stdin: Readable;
  /** The JSON-RPC output stream; nothing else is ever written to it. */
  readonly stdout: Writable;
  readonly config: Config;
  readonly clock: Clock;
  /** The working directory; its basename is the default register context. */
  readonly cwd: string;
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
  /** Periodic work started with the server, stopped at shutdown. */
  readonly background?: (ctx: BusContext) => { stop(): Promise<void> | void };
}

/** Serves until the client closes the input stream; resolves after shutdown. */
export async function runMcp(options: McpProcessOptions): Promise<void> {
  const { config } = options;
  const dataDir = prepareDataDir(config.data_directory);
  const log = createFileLogger(dataDir, config.log_level);
  const { db, migrations } = await openDatabase({ dataDir, driver: config.driver, now: () => options.clock.now() });
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
  };
  const server = createMcpServer({ ctx, tools: options.tools, version: options.version });
  const background = options.background?.(ctx);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    options.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await background?.stop();
  await server.close().catch(() => undefined);
  db.close();
  log.info('mcp stop', { pid: process.pid });
  await log.close();
}
