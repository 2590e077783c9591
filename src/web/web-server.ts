/**
 * `agentbus web`'s server: node:http on 127.0.0.1 only, the page's own files,
 * the JSON API (web-api.ts) and the event stream (web-events.ts). Every
 * request passes web-security.ts first. The server starts whether or not the
 * database exists yet (web-bus.ts).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { BusError } from '../bus/bus-error.js';
import { createChangeWaiter, POLL_INTERVAL_MS } from '../bus/change-waiter.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { RegisterStep } from '../bus/person-context.js';
import { answerRoute, apiRoutes, HttpError } from './web-api.js';
import { busHolder, webBus, type OpenBus, type WebBus, type WebIo } from './web-bus.js';
import { startEventHub } from './web-events.js';
import { SECURITY_HEADERS, refusalOf } from './web-security.js';

/** The page's own files, served as they are (index.html with the token put in), each with its type. */
export const PAGE_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** How the command's own errors reach the page: what its opener and the person's register step throw are its to describe. */
export interface CommandErrors {
  /** Wraps the person's register step (the command turns a refused name into its own error). */
  readonly registering: RegisterStep;
  /** The code and message of one of the command's errors, answered as a 400; undefined for any other error. */
  refusal(error: unknown): { readonly code: string; readonly message: string } | undefined;
}

export interface WebServerOptions {
  readonly config: Config;
  readonly io: WebIo;
  /** The command's errors, as the page is told of them. */
  readonly commandErrors: CommandErrors;
  /** Opens the existing database; undefined while there is none (the server waits for it, and never creates it). */
  readonly openBus: OpenBus;
  readonly log: Logger;
  /** The secret every request must carry. */
  readonly token: string;
  /** 0: any free port. */
  readonly port: number;
  /** Where the PAGE_FILES are. */
  readonly staticDir: string;
  /** The name the person's writes are sent as. */
  readonly person: string;
}

export interface WebServer {
  /** The port it listens on (the chosen one when asked for 0). */
  readonly port: number;
  /** The URL to open, token included. */
  readonly url: string;
  /** True when the database was open at start (false: the page waits for the first agent). */
  readonly live: boolean;
  /** Closes the event streams, then the listener. */
  close(): Promise<void>;
}

const BUS_STATUS: Readonly<Record<string, number>> = {
  validation: 400,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  inspection_rejected: 422,
  inspection_unavailable: 503,
  capacity_exhausted: 507,
};

function send200(res: ServerResponse, type: string, body: string | Buffer): void {
  res.writeHead(200, { 'Content-Type': type });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

/** What answering one request needs: the page, the routes, the event hub and the bus, all made once at start. */
interface RequestContext {
  readonly options: WebServerOptions;
  /** The page's files by name, as read at start. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** index.html with the token put in. */
  readonly page: string;
  readonly routes: ReturnType<typeof apiRoutes>;
  readonly holder: ReturnType<typeof busHolder>;
  readonly hub: ReturnType<typeof startEventHub>;
  /** The port listened on, known only once listening (the Host check compares with it). */
  port(): number;
}

/** The answer to a route that threw: its own status for the errors the page knows, else 500 (logged). */
function sendFailure(res: ServerResponse, error: unknown, options: WebServerOptions, path: string): void {
  if (error instanceof HttpError) return sendJson(res, error.status, { error: { code: error.code, message: error.message, field: error.field } });
  if (error instanceof BusError) return sendJson(res, BUS_STATUS[error.code] ?? 500, { error: { code: error.code, message: error.message, field: error.field } });
  const commandError = options.commandErrors.refusal(error);
  if (commandError !== undefined) return sendJson(res, 400, { error: { code: commandError.code, message: commandError.message } });
  options.log.error('web console: request failed', { path, error: (error as Error).message });
  sendJson(res, 500, { error: { code: 'internal', message: (error as Error).message } });
}

/** Answers one request: the security checks first, then the page's files, the event stream, or an API route. */
async function handleRequest(ctx: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { options, files, routes } = ctx;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const refusal = refusalOf(req, url, ctx.port(), options.token);
  if (refusal !== undefined) {
    options.log.warn('web console: request refused', { path: url.pathname, reason: refusal.reason });
    sendJson(res, refusal.status, { error: { code: 'forbidden', message: refusal.reason } });
    return;
  }
  const key = `${req.method ?? ''} ${url.pathname}`;
  if (key === 'GET /' || key === 'GET /index.html') return send200(res, PAGE_FILES['index.html'] as string, ctx.page);
  const file = req.method === 'GET' && url.pathname !== '/index.html' ? files.get(url.pathname.slice(1)) : undefined;
  if (file !== undefined) return send200(res, PAGE_FILES[url.pathname.slice(1)] as string, file);
  if (key === 'GET /events') return ctx.hub.add(res);
  const route = routes[key];
  if (route === undefined) {
    const known = Object.keys(routes).some((k) => k.endsWith(` ${url.pathname}`));
    sendJson(res, known ? 405 : 404, { error: { code: known ? 'method_not_allowed' : 'not_found', message: `no ${key}` } });
    return;
  }
  try {
    sendJson(res, 200, await answerRoute(route, url, ctx.holder, req));
  } catch (error) {
    sendFailure(res, error, options, url.pathname);
  }
}

/** Starts listening on 127.0.0.1; resolves once it listens. Throws what opening an existing database throws, and the listener's error (EADDRINUSE). */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const { config, io, token, person } = options;
  const files = new Map(Object.keys(PAGE_FILES).map((name) => [name, readFileSync(join(options.staticDir, name))]));
  const page = (files.get('index.html') as Buffer).toString('utf8').replaceAll('__TOKEN__', encodeURIComponent(token));
  const waiter = createChangeWaiter(config.data_directory, POLL_INTERVAL_MS, { everyDirect: true });
  const holder = busHolder(async (): Promise<WebBus | undefined> => {
    const opened = await options.openBus();
    return opened === undefined ? undefined : webBus(opened, config, io, options.log, waiter, person);
  });
  try {
    await holder.look();
  } catch (error) {
    waiter.close();
    throw error;
  }
  const hub = startEventHub(holder, waiter);
  const routes = apiRoutes(person, options.commandErrors.registering);

  let port = options.port;
  const ctx: RequestContext = { options, files, page, routes, holder, hub, port: () => port };
  const server: Server = createServer((req, res) => void handleRequest(ctx, req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    // The watcher and the loop would keep the process alive after the command failed.
    await hub.close();
    waiter.close();
    throw error;
  }
  port = (server.address() as { port: number }).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/?token=${encodeURIComponent(token)}`,
    live: holder.current() !== undefined,
    async close() {
      await hub.close();
      waiter.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
