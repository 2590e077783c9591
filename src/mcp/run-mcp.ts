/**
 * One `agentbus mcp` process: the MCP server on the given streams first, then
 * the bus (bus-process.ts), and a clean shutdown when the client closes stdin
 * or a stop signal arrives.
 *
 * The server answers the client's first message (initialize) before anything
 * else is loaded: a harness waits for that answer, and Codex leaves out the
 * tools of a server not ready about 1.2 s after spawning it. Then the bus
 * module loads (this module imports it only then, and imports nothing heavy
 * itself), the tools are listed, and the database opens; tools/list waits for
 * the tools, tool calls for the database. When the database cannot be
 * opened (data directory, file, another process) the server stays up: every
 * tool call answers why, as a tool error the model can relay, and the open is
 * tried again (bus-process.ts) until it works. A process whose database never
 * opened exits 1 when its client leaves; stderr got the reason meanwhile.
 */
import type { Readable, Writable } from 'node:stream';
import type { BusContext } from '../bus/bus-context.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { BusProcess } from './bus-process.js';
import { createMcpServer, type McpBackend } from './mcp-server.js';
import type { ToolDefinition } from './tool-definition.js';
import type { ToolServices } from './tools/all-tools.js';

export interface McpProcessOptions {
  /** The JSON-RPC input stream (stdin of the process). */
  readonly stdin: Readable;
  /** The JSON-RPC output stream; nothing else is ever written to it. */
  readonly stdout: Writable;
  readonly config: Config;
  readonly clock: Clock;
  /** The working directory; its basename is the default register context. */
  readonly cwd: string;
  /** Builds the tool list from the process's shared services (may import the tools first). */
  readonly tools: (services: ToolServices) => readonly ToolDefinition[] | Promise<readonly ToolDefinition[]>;
  readonly version: string;
  /** Aborting it shuts the server down as if the client had closed stdin (SIGTERM from a harness). */
  readonly stop?: AbortSignal;
  /** The harness's log (stderr of the process): told once when the process stops using the database. */
  readonly stderr?: Writable;
  /** Called once when the first open of the database has settled, opened or failed: start-up is over. */
  readonly startedUp?: () => void;
}

/** How long the bus waits for the client's first message before it starts anyway. */
const START_AFTER_MS = 50;

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // requests still waiting are dropped with the connection
  return { promise, resolve, reject };
}

/** Serves until the client closes the input stream; resolves after shutdown with the exit code (1: the database never opened). */
export async function runMcp(options: McpProcessOptions): Promise<number> {
  const backend = deferred<McpBackend>();
  const bus = deferred<BusProcess>();
  const context = (): Promise<BusContext> => bus.promise.then((b) => b.context());
  const server = createMcpServer({ backend: backend.promise, context, version: options.version, channels: options.config.push });
  const connection = server.serve(options.stdin, options.stdout);
  if (options.stop?.aborted) connection.close();
  else options.stop?.addEventListener('abort', () => connection.close(), { once: true });

  let wait: NodeJS.Timeout | undefined;
  await Promise.race([connection.firstMessage, new Promise<void>((resolve) => (wait = setTimeout(resolve, START_AFTER_MS)))]);
  clearTimeout(wait);
  let started: BusProcess;
  try {
    const { createBusProcess } = await import('./bus-process.js');
    started = await createBusProcess({
      ...options,
      ...(options.config.push ? { push: ({ method, params }) => connection.notify(method, params) } : {}),
    });
  } catch (error) {
    // Not the storage (that is answered per call): the tools could not be built, a bug.
    backend.reject(error);
    bus.reject(error);
    connection.close();
    options.stdin.destroy();
    throw error;
  }
  const { afterToolCall } = started;
  backend.resolve({ tools: started.tools, log: started.log, storageCheck: started.storageCheck, afterToolCall });
  bus.resolve(started);
  started.start();
  const startedUp = options.startedUp ?? (() => undefined);
  started.context().then(startedUp, startedUp);
  await connection.closed;
  // Stop reading: after a stop signal the client may still hold the pipe open, which would keep the process alive.
  options.stdin.destroy();
  await started.stop();
  return started.failing ? 1 : 0;
}
