/**
 * `agentbus web`'s server: node:http on 127.0.0.1 only, the page's three
 * files, a small JSON API over the console's own reads and writes
 * (searchAsReader, listMemories, memoryHistory; send, edit_memory and
 * delete_memory as a person), and the event stream. Every request passes
 * web-security.ts first.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { basename, join } from 'node:path';
import type { BusContext } from '../bus/bus-context.js';
import { BusError } from '../bus/bus-error.js';
import { createChangeWaiter } from '../bus/change-waiter.js';
import { deleteMemory, editMemory } from '../bus/memories.js';
import { listMemories, memoryHistory } from '../bus/memory-listing.js';
import { MESSAGE_COLUMNS, toMessage, type MessageRow } from '../bus/message-row.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import { searchAsReader } from '../bus/search.js';
import { send } from '../bus/send.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log.js';
import { CliError } from '../cli/cli-error.js';
import type { CliIo } from '../cli/cli-io.js';
import { asPerson } from '../cli/person-context.js';
import { readReport } from '../cli/status-command.js';
import { startEventHub } from './web-events.js';
import { SECURITY_HEADERS, refusalOf } from './web-security.js';

/** Largest request body accepted (a message is at most max_message_kib, 64 KiB by default, well below). */
const MAX_BODY_BYTES = 1024 * 1024;
const PAGE_DEFAULT = 200;
const PAGE_MAX = 1000;

export interface WebServerOptions {
  readonly config: Config;
  readonly io: CliIo;
  /** The open database the server reads and writes through. */
  readonly db: Database;
  readonly schemaVersion: number;
  readonly log: Logger;
  /** The secret every request must carry. */
  readonly token: string;
  /** 0: any free port. */
  readonly port: number;
  /** Where index.html, app.js and app.css are. */
  readonly staticDir: string;
  /** The name the person's writes are sent as. */
  readonly person: string;
}

export interface WebServer {
  /** The port it listens on (the chosen one when asked for 0). */
  readonly port: number;
  /** The URL to open, token included. */
  readonly url: string;
  /** Closes the event streams, then the listener. */
  close(): Promise<void>;
}

/** An answer to the client with a status other than 200, and the one line it shows. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = 'bad_request',
  ) {
    super(message);
  }
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

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) throw new HttpError(415, 'send the body as application/json');
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

function intParam(url: URL, name: string, fallback?: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = url.searchParams.get(name);
  if (text === null || text === '') {
    if (fallback === undefined) throw new HttpError(400, `${name} is required: a whole number`);
    return fallback;
  }
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1 || Number(text) > max) throw new HttpError(400, `${name} must be a whole number from 1 to ${max}; got "${text}"`);
  return Number(text);
}

/** Starts listening on 127.0.0.1; resolves once it listens. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const { config, io, db, token, person } = options;
  const files = {
    html: readFileSync(join(options.staticDir, 'index.html'), 'utf8'),
    js: readFileSync(join(options.staticDir, 'app.js')),
    css: readFileSync(join(options.staticDir, 'app.css')),
  };
  const waiter = createChangeWaiter(config.data_directory);
  const base: Omit<BusContext, 'owner' | 'processIdentity'> = {
    db,
    config,
    clock: io.clock,
    log: options.log,
    defaultContext: basename(io.cwd) || 'unknown',
    rateLimiter: new RateLimiter(config),
    announce: () => waiter.announce(),
  };
  const reader: BusContext = { ...base, owner: 'web-console-reader', processIdentity: undefined };
  const lastSeq = (): number => db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0;
  const readState = (): unknown => {
    const report = readReport(db, config, io.clock, options.schemaVersion);
    return {
      person,
      sessions: report.sessions,
      channels: report.channels,
      usage: report.usage,
      notices: report.notices,
      reservations: report.reservations,
      embeddings: report.embeddings,
      memory_mark: db.read(() => db.get<{ mark: number | null }>('SELECT max(tombstone_at) AS mark FROM messages WHERE memory_id IS NOT NULL')?.mark ?? 0),
      last_seq: db.read(lastSeq),
    };
  };
  const hub = startEventHub(db, waiter, readState);
  const write = <T>(use: (ctx: BusContext, as: string) => Promise<T>): Promise<T> => asPerson(base, person, use);

  const routes: Record<string, (url: URL, req: IncomingMessage) => Promise<unknown> | unknown> = {
    'GET /api/state': () => readState(),
    'GET /api/messages': (url) => {
      const channel = url.searchParams.get('channel');
      const before = intParam(url, 'before', Number.MAX_SAFE_INTEGER);
      const limit = intParam(url, 'limit', PAGE_DEFAULT, PAGE_MAX);
      const rows = db.read(() =>
        db.all<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.tombstone = 0 AND m.seq < ? ${channel === null ? '' : 'AND m.channel = ?'} ORDER BY m.seq DESC LIMIT ?`,
          channel === null ? [before, limit] : [before, channel, limit],
        ),
      );
      return { messages: rows.reverse().map(toMessage) };
    },
    'GET /api/thread': (url) => {
      const seq = intParam(url, 'seq');
      const rows = db.read(() =>
        db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.tombstone = 0 AND (m.seq = ? OR m.reply_to = ?) ORDER BY m.seq`, [seq, seq]),
      );
      if (rows.length === 0) throw new HttpError(404, `no message ${seq}`, 'not_found');
      return { messages: rows.map(toMessage) };
    },
    'GET /api/memories': (url) => {
      const channel = url.searchParams.get('channel');
      return { memories: listMemories(reader, { limit: intParam(url, 'limit', PAGE_DEFAULT, PAGE_MAX), ...(channel === null ? {} : { channel }) }) };
    },
    'GET /api/memory-history': (url) => ({ revisions: memoryHistory(reader, intParam(url, 'id')) }),
    'GET /api/search': async (url) => {
      const input: Record<string, unknown> = { query: url.searchParams.get('q') ?? '' };
      for (const field of ['mode', 'channel', 'sender', 'continuation']) {
        const value = url.searchParams.get(field);
        if (value !== null && value !== '') input[field] = value;
      }
      return searchAsReader(reader, input);
    },
    'POST /api/post': async (_url, req) => {
      const body = await readJson(req);
      return write(async (ctx, as) => ({ ...(await send(ctx, { ...pick(body, ['channel', 'content', 'reply_to', 'idempotency_key']), as })), as }));
    },
    'POST /api/edit-memory': async (_url, req) => {
      const body = await readJson(req);
      return write(async (ctx, as) => ({ ...(await editMemory(ctx, { ...pick(body, ['memory_id', 'content', 'idempotency_key']), as })), as }));
    },
    'POST /api/delete-memory': async (_url, req) => {
      const body = await readJson(req);
      return write(async (ctx, as) => ({ ...(await deleteMemory(ctx, { ...pick(body, ['memory_id', 'idempotency_key']), as })), as }));
    },
  };

  let port = options.port;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const refusal = refusalOf(req, url, port, token);
    if (refusal !== undefined) {
      options.log.warn('web console: request refused', { path: url.pathname, reason: refusal.reason });
      sendJson(res, refusal.status, { error: { code: 'forbidden', message: refusal.reason } });
      return;
    }
    const key = `${req.method ?? ''} ${url.pathname}`;
    if (key === 'GET /' || key === 'GET /index.html') return send200(res, 'text/html; charset=utf-8', files.html.replaceAll('__TOKEN__', encodeURIComponent(token)));
    if (key === 'GET /app.js') return send200(res, 'text/javascript; charset=utf-8', files.js);
    if (key === 'GET /app.css') return send200(res, 'text/css; charset=utf-8', files.css);
    if (key === 'GET /events') return hub.add(res);
    const route = routes[key];
    if (route === undefined) {
      const known = Object.keys(routes).some((k) => k.endsWith(` ${url.pathname}`));
      sendJson(res, known ? 405 : 404, { error: { code: known ? 'method_not_allowed' : 'not_found', message: `no ${key}` } });
      return;
    }
    try {
      sendJson(res, 200, await route(url, req));
    } catch (error) {
      if (error instanceof HttpError) return sendJson(res, error.status, { error: { code: error.code, message: error.message } });
      if (error instanceof BusError) return sendJson(res, BUS_STATUS[error.code] ?? 500, { error: { code: error.code, message: error.message } });
      if (error instanceof CliError) return sendJson(res, 400, { error: { code: error.code, message: error.message } });
      options.log.error('web console: request failed', { path: url.pathname, error: (error as Error).message });
      sendJson(res, 500, { error: { code: 'internal', message: (error as Error).message } });
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new CliError('failed', `port ${options.port} on 127.0.0.1 is in use: choose another with --port, or --port 0 for any free one`)
            : error,
        ),
      );
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
    async close() {
      await hub.close();
      waiter.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Only the named fields of a request body: anything else (an `as` above all) is not the client's to set. */
function pick(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
}
