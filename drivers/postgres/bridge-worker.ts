/**
 * The worker half of the bridge (bridge.ts): the only code that holds the
 * `pg` client and its socket. It runs requests one at a time, in order,
 * replies to each on the port and then wakes the blocked caller through the
 * shared flag. A connection that fails, or that the caller abandoned at its
 * deadline, is dropped; the next request connects again. A request made
 * inside a transaction that began on an earlier connection is refused, never
 * run outside that transaction.
 */
import { type MessagePort, workerData } from 'node:worker_threads';
import pg, { type Client } from 'pg';
import { unsafeIntegerError } from '../../src/db/contract/statement-parameters.js';
import type { BridgeFailure, BridgeReply, BridgeRequest, BridgeSettings } from './bridge-protocol.js';
import { startListener, type Listener } from './bridge-listener.js';
import { pgFailure } from './pg-errors.js';
import { pgTypeParsers, OutOfRange } from './pg-values.js';
import { redactedUrl } from './redacted-url.js';

const settings = (workerData as { settings: BridgeSettings; port: MessagePort }).settings;
const port = (workerData as { settings: BridgeSettings; port: MessagePort }).port;
const where = redactedUrl(settings.url);

let client: Client | undefined;
let generation = 0;
let serverVersion: string | undefined;
let queue: Promise<void> = Promise.resolve();
let listener: Listener | undefined;

function reply(message: BridgeReply): void {
  port.postMessage(message);
  Atomics.store(settings.flag, 0, 1);
  Atomics.notify(settings.flag, 0);
}

/** Drops the current connection; a query running on it fails (its late reply is ignored by the caller). */
function drop(): void {
  const gone = client;
  client = undefined;
  if (gone === undefined) return;
  try {
    gone.connection.stream.destroy();
  } catch {
    // Already closed.
  }
  gone.end().catch(() => undefined);
}

class ServerTooOld extends Error {}

async function connected(): Promise<Client> {
  if (client !== undefined) return client;
  const fresh = new pg.Client({
    connectionString: settings.url,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    lock_timeout: settings.lockTimeoutMs,
    application_name: 'agentbus',
    types: pgTypeParsers,
  });
  // A connection lost while idle (a server restart) reports here; the next request reconnects.
  fresh.on('error', () => {
    if (client === fresh) client = undefined;
  });
  try {
    await fresh.connect();
    const version = await fresh.query({ text: "SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version" });
    const row = version.rows[0] as { num: number; version: string };
    if (row.num < settings.minimumServerVersion) {
      throw new ServerTooOld(
        `the PostgreSQL server ${where} runs version ${row.version}, older than ${Math.floor(settings.minimumServerVersion / 10_000)}, the oldest agentbus supports: upgrade the server, or point database_url at a newer one`,
      );
    }
    // A plan for each run's own values: a prepared statement's generic plan (which PostgreSQL
    // switches to after five runs) can pick a seq range scan for a text search whose values make
    // the GIN index the fast way, 200 ms against 20 (docs/performance.md, "The postgres driver").
    await fresh.query('SET plan_cache_mode = force_custom_plan');
    serverVersion = row.version;
  } catch (error) {
    fresh.end().catch(() => undefined);
    throw error;
  }
  generation++;
  client = fresh;
  return fresh;
}

function failureOf(error: unknown): BridgeFailure {
  if (error instanceof ServerTooOld) return { code: 'driver_unavailable', message: error.message, sqlState: undefined };
  return pgFailure(error, where);
}

/** The first value out of a JS number's exact range, as the contract's integer_range failure. */
function rangeFailure(rows: readonly Record<string, unknown>[]): BridgeFailure | undefined {
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (value instanceof OutOfRange) {
        return { code: 'integer_range', message: unsafeIntegerError(`column "${column}"`, value.text).message, sqlState: undefined };
      }
    }
  }
  return undefined;
}

async function handle(request: Exclude<BridgeRequest, { kind: 'abandon' | 'listen' }>): Promise<void> {
  const base = { id: request.id, rows: [], changes: 0 };
  if (request.kind === 'close') {
    const gone = client;
    client = undefined;
    await Promise.all([gone?.end().catch(() => undefined), listener?.close()]);
    listener = undefined;
    reply({ ...base, failure: undefined, txStatus: 'I', generation, serverVersion });
    return;
  }
  if (request.generation !== undefined && (client === undefined || request.generation !== generation)) {
    const message = `the connection to the PostgreSQL server ${where} was lost inside a transaction, which the server rolled back; agentbus reconnects by itself: retry the call`;
    reply({ ...base, failure: { code: 'unavailable', message, sqlState: undefined }, txStatus: 'I', generation, serverVersion });
    return;
  }
  let running: Client | undefined;
  let before: 'I' | 'T' | 'E' = 'I';
  try {
    running = await connected();
    before = running.getTransactionStatus() ?? 'I';
    if (request.kind === 'exec') {
      await running.query(request.sql);
      reply({ ...base, failure: undefined, txStatus: running.getTransactionStatus() ?? 'I', generation, serverVersion });
      return;
    }
    const result = await running.query({ name: request.name, text: request.sql, values: request.values });
    const range = rangeFailure(result.rows);
    const rows = range === undefined ? result.rows : [];
    reply({ ...base, rows, changes: result.rowCount ?? 0, failure: range, txStatus: running.getTransactionStatus() ?? 'I', generation, serverVersion });
  } catch (error) {
    const failure = failureOf(error);
    // No SQLSTATE: the socket failed, not the statement; this connection is done.
    if (failure.code === 'unavailable' && failure.sqlState === undefined && client === running) drop();
    // Text that opened a transaction and failed inside it (the dialect's beginWrite waiting past
    // lock_timeout) leaves none open, as a failed BEGIN IMMEDIATE does in SQLite: an aborted
    // PostgreSQL transaction could only be rolled back anyway. Not asked of getTransactionStatus():
    // pg rejects at the ErrorResponse, and the ReadyForQuery that says 'E' may come in a later
    // packet (seen under load), so the status here can still be the one before. A ROLLBACK with
    // no transaction open is only a warning, and pg runs it after that ReadyForQuery.
    if (request.kind === 'exec' && before === 'I' && failure.sqlState !== undefined && client !== undefined && client === running) {
      await running.query('ROLLBACK').catch(() => undefined);
    }
    const txStatus = client !== undefined && client === running ? (running.getTransactionStatus() ?? 'I') : 'I';
    reply({ ...base, failure, txStatus, generation, serverVersion });
  }
}

port.on('message', (request: BridgeRequest) => {
  if (request.kind === 'abandon') {
    drop();
    return;
  }
  // Not queued: the listening connection is independent of the requests (and has no reply).
  if (request.kind === 'listen') {
    if (listener === undefined) listener = startListener(settings, request.channel, request.port);
    return;
  }
  queue = queue.then(() => handle(request));
});
