/**
 * `agentbus web`: the web console, served on 127.0.0.1 until Ctrl-C. Prints
 * the URL with a token made for this run; every request must carry it. On a
 * data directory with no database yet it starts anyway and the page waits for
 * the first agent: like every reading command, it never creates the database.
 */
import { randomBytes } from 'node:crypto';
import { createFileLogger } from '../../../log.js';
import { startWebServer, type CommandErrors } from '../../../web/web-server.js';
import { NO_AGENT_YET, type OpenedBus } from '../../../web/web-bus.js';
import { openBusIfMade } from '../../bus-database.js';
import { commandConfig } from '../../cli-config.js';
import { asCliError } from '../../bus-error-exit.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { humanName } from '../../human-name.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus web` takes (its spec.ts). */
export type WebOptions = OptionsOf<typeof spec.options>;

function portFlag(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new CliError('usage', `--port must be a port number from 0 to 65535 (0: any free port); got "${text}"`);
  return Number(text);
}

/** A refused open (schema_older, ...) and a refused person name reach the page as the command's errors, as they would on the command line. */
const COMMAND_ERRORS: CommandErrors = {
  registering: asCliError,
  refusal: (error) => (error instanceof CliError ? { code: error.code, message: error.message } : undefined),
};

/** Runs `agentbus web` until `signal` aborts; `staticDir` holds the page's files. */
export async function webCommand(io: CliIo, options: WebOptions, signal: AbortSignal, staticDir: string): Promise<number> {
  const config = commandConfig(io, options);
  const port = portFlag(options.port);
  const person = options.as ?? humanName(io);
  let opened: OpenedBus | undefined;
  // Looked for by the server until it exists; opened as every console command opens it.
  const openBus = async (): Promise<OpenedBus | undefined> => {
    opened = await openBusIfMade(config, io, { command: 'web', writes: true });
    return opened;
  };
  const log = createFileLogger(config.data_directory, config.log_level);
  try {
    const server = await startWebServer({ config, io, openBus, log, token: randomBytes(24).toString('base64url'), port, staticDir, person, commandErrors: COMMAND_ERRORS }).catch(
      (error: NodeJS.ErrnoException) => {
        throw error.code === 'EADDRINUSE' ? new CliError('failed', `port ${port} on 127.0.0.1 is in use: choose another with --port, or --port 0 for any free one`) : error;
      },
    );
    io.stdout.write(`agentbus web console: ${server.url}\n`);
    io.stderr.write(`agentbus: serving 127.0.0.1:${server.port} until Ctrl-C; the token in the URL is required on every request (posts are sent as "${person}")\n`);
    if (!server.live) io.stderr.write(`agentbus: ${NO_AGENT_YET}\n`);
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await server.close();
    return 0;
  } finally {
    opened?.db.close();
    await log.close();
  }
}
