/**
 * The web console's JSON API over the console's own reads and writes
 * (searchAsReader, listMemories, memoryHistory; send, edit_memory and
 * delete_memory as a person). Every query parameter and every field of a
 * request body is checked: an unknown one, or a value out of range, is a 400
 * naming it, and nothing is read or written. Direct messages come with
 * their read states (web-direct.ts); `GET /api/messages?direct=true` (and
 * `between=A,B`, one conversation) lists them, `POST /api/post` with `to`
 * sends one.
 */
import type { IncomingMessage } from 'node:http';
import { requireChannel } from '../bus/channels.js';
import { deleteMemory, editMemory } from '../bus/memories.js';
import { listMemories, memoryHistory } from '../bus/memory-listing.js';
import { MESSAGE_COLUMNS, toMessage, type MessageRow } from '../bus/message-row.js';
import { isChannelName } from '../bus/names.js';
import { searchAsReader } from '../bus/search.js';
import { send } from '../bus/send.js';
import type { BusContext } from '../bus/bus-context.js';
import { asPerson, type RegisterStep } from '../bus/person-context.js';
import { NO_AGENT_YET, type BusHolder, type WebBus } from './web-bus.js';
import { directCondition, withReadStates } from './web-direct.js';

/** Largest request body accepted (a message is at most max_message_kib, 64 KiB by default, well below). */
const MAX_BODY_BYTES = 1024 * 1024;
/** Rows per page of messages or memories, unless `limit` says otherwise. */
export const PAGE_DEFAULT = 200;
const PAGE_MAX = 1000;

/** An answer to the client with a status other than 200, the one line it shows, and the query parameter at fault. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string = 'bad_request',
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A 400 for query parameter `name`. */
function badParam(name: string, message: string): HttpError {
  return new HttpError(400, message, 'bad_request', name);
}

/** One API route: the query parameters it takes (besides `token`) and what it answers. */
interface Route {
  /** The query parameters this route reads; any other is refused. */
  readonly params: readonly string[];
  /** The answer, sent as JSON. */
  readonly answer: (url: URL, bus: WebBus, req: IncomingMessage) => Promise<unknown> | unknown;
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
    if (fallback === undefined) throw badParam(name, `${name} is required: a whole number`);
    return fallback;
  }
  if (!/^\d{1,16}$/.test(text) || Number(text) < 1 || Number(text) > max) throw badParam(name, `${name} must be a whole number from 1 to ${max}; got "${text.slice(0, 100)}"`);
  return Number(text);
}

/** The `channel` parameter: absent (every channel) or an existing channel's name. */
function channelParam(url: URL, bus: WebBus): string | undefined {
  const name = url.searchParams.get('channel');
  if (name === null) return undefined;
  if (!isChannelName(name)) throw badParam('channel', `channel must be a channel name (letters, digits, ".", "_", "-"); got "${name.slice(0, 200)}"`);
  return bus.db.read(() => requireChannel(bus.reader, name).name);
}

/**
 * The request body, which may hold only `fields`: anything else is refused
 * with a 400 naming it (a misspelt field must not be dropped silently: a
 * `too` for `to` would post to a channel), `as` above all, which is not the
 * page's to set: writes go as the console's person.
 */
function fields(body: Record<string, unknown>, allowed: readonly string[], person: string): Record<string, unknown> {
  for (const name of Object.keys(body)) {
    if (allowed.includes(name)) continue;
    const why = name === 'as' ? `writes are sent as "${person}" (agentbus web --as NAME chooses it)` : `this endpoint takes ${allowed.join(', ')}`;
    throw new HttpError(400, `unknown field "${name.slice(0, 100)}": ${why}`, 'bad_request', name);
  }
  return Object.fromEntries(allowed.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
}

/** The `direct` parameter: absent, or "true" (only direct messages). */
function directParam(url: URL): boolean {
  const text = url.searchParams.get('direct');
  if (text === null) return false;
  if (text !== 'true') throw badParam('direct', `direct must be "true" (only direct messages) or left out; got "${text.slice(0, 100)}"`);
  return true;
}

/** The `between` parameter: two display names, comma-separated (one conversation), or absent. */
function betweenParam(url: URL): [string, string] | undefined {
  const text = url.searchParams.get('between');
  if (text === null) return undefined;
  const names = text.split(',');
  if (names.length !== 2 || names.some((n) => n === '' || n.length > 200)) {
    throw badParam('between', `between must be two display names separated by a comma, e.g. between=Ann,Kim; got "${text.slice(0, 100)}"`);
  }
  return [names[0] as string, names[1] as string];
}

/** A page of messages, newest `limit` below `before`, oldest first; `has_more` when older ones exist. */
function messagesPage(url: URL, bus: WebBus): unknown {
  const channel = channelParam(url, bus);
  const between = betweenParam(url);
  const direct = directParam(url) || between !== undefined;
  if (direct && channel !== undefined) throw badParam('direct', 'direct messages are on no channel: give direct (or between) or channel, not both');
  const before = intParam(url, 'before', Number.MAX_SAFE_INTEGER);
  const limit = intParam(url, 'limit', PAGE_DEFAULT, PAGE_MAX);
  const where = direct ? directCondition(between) : channel === undefined ? { sql: 'TRUE', params: [] } : { sql: 'm.channel = ?', params: [channel] };
  return bus.db.read(() => {
    const rows = bus.db.all<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.tombstone = 0 AND m.seq < ? AND ${where.sql} ORDER BY m.seq DESC ${bus.db.capabilities.dialect.limit}`,
      [before, ...where.params, limit + 1],
    );
    return { messages: withReadStates(bus.db, rows.slice(0, limit).reverse().map(toMessage)), has_more: rows.length > limit };
  });
}

/** GET /api/thread: the message `seq` and its replies, oldest first; 404 when there is no such message. */
function threadPage(url: URL, bus: WebBus): { messages: ReturnType<typeof withReadStates> } {
  const seq = intParam(url, 'seq');
  const rows = bus.db.read(() =>
    withReadStates(
      bus.db,
      bus.db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.tombstone = 0 AND (m.seq = ? OR m.reply_to = ?) ORDER BY m.seq`, [seq, seq]).map(toMessage),
    ),
  );
  if (rows.length === 0) throw new HttpError(404, `no message ${seq}`, 'not_found');
  return { messages: rows };
}

/** GET /api/search: the query parameters as search's input, searched as a reader. */
function searchPage(url: URL, bus: WebBus): ReturnType<typeof searchAsReader> {
  const input: Record<string, unknown> = { query: url.searchParams.get('q') ?? '', ...(directParam(url) ? { direct: true } : {}) };
  for (const field of ['mode', 'channel', 'sender', 'continuation']) {
    const value = url.searchParams.get(field);
    if (value !== null && value !== '') input[field] = value;
  }
  return searchAsReader(bus.reader, input);
}

/** The routes, by "METHOD /path"; `person` is the name writes are sent as, registered through `registering`. */
export function apiRoutes(person: string, registering: RegisterStep): Record<string, Route> {
  const write = <T>(bus: WebBus, use: (ctx: BusContext, as: string) => Promise<T>): Promise<T> => asPerson(bus.base, person, use, registering);
  return {
    'GET /api/state': { params: [], answer: (_url, bus) => bus.readState() },
    'GET /api/messages': { params: ['channel', 'direct', 'between', 'before', 'limit'], answer: messagesPage },
    'GET /api/thread': {
      params: ['seq'],
      answer: threadPage,
    },
    'GET /api/memories': {
      params: ['channel', 'limit'],
      answer: (url, bus) => {
        const channel = channelParam(url, bus);
        return { memories: listMemories(bus.reader, { limit: intParam(url, 'limit', PAGE_DEFAULT, PAGE_MAX), ...(channel === undefined ? {} : { channel }) }) };
      },
    },
    'GET /api/memory-history': { params: ['id'], answer: (url, bus) => ({ revisions: memoryHistory(bus.reader, intParam(url, 'id')) }) },
    'GET /api/search': {
      params: ['q', 'mode', 'channel', 'sender', 'continuation', 'direct'],
      answer: searchPage,
    },
    'POST /api/post': {
      params: [],
      answer: async (_url, bus, req) => {
        const body = await readJson(req);
        return write(bus, async (ctx, as) => ({ ...(await send(ctx, { ...fields(body, ['channel', 'to', 'content', 'reply_to', 'idempotency_key'], person), as })), as }));
      },
    },
    'POST /api/edit-memory': {
      params: [],
      answer: async (_url, bus, req) => {
        const body = await readJson(req);
        return write(bus, async (ctx, as) => ({ ...(await editMemory(ctx, { ...fields(body, ['memory_id', 'content', 'idempotency_key'], person), as })), as }));
      },
    },
    'POST /api/delete-memory': {
      params: [],
      answer: async (_url, bus, req) => {
        const body = await readJson(req);
        return write(bus, async (ctx, as) => ({ ...(await deleteMemory(ctx, { ...fields(body, ['memory_id', 'idempotency_key'], person), as })), as }));
      },
    },
  };
}

/** Runs `route`: refuses a parameter it does not take, and answers 503 while there is no database yet. */
export async function answerRoute(route: Route, url: URL, holder: BusHolder, req: IncomingMessage): Promise<unknown> {
  for (const name of new Set(url.searchParams.keys())) {
    if (name === 'token' || route.params.includes(name)) continue;
    const takes = route.params.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${route.params.join(', ')}`;
    throw badParam(name, `unknown parameter "${name.slice(0, 100)}": ${takes}`);
  }
  for (const name of route.params) {
    if (url.searchParams.getAll(name).length > 1) throw badParam(name, `${name} is given more than once`);
  }
  const bus = holder.current() ?? (await holder.look());
  if (bus === undefined) throw new HttpError(503, NO_AGENT_YET, 'no_database');
  return route.answer(url, bus, req);
}
