/**
 * JSON-RPC 2.0 as MCP's stdio transport carries it: one JSON message per line
 * on a pair of streams. Requests go to one handler with an AbortSignal. A
 * client's `notifications/cancelled` aborts it and the request gets no
 * response, as MCP specifies. The end of the input also aborts the signals of
 * requests still running (a long wait ends now), but every request already
 * read is still answered before the connection counts as closed: a client that
 * writes its requests and closes its end still gets its answers. close()
 * drops everything at once. Lines that are not a JSON-RPC message are
 * dropped, never answered on stdout with anything but JSON-RPC.
 *
 * agentbus speaks this itself instead of through @modelcontextprotocol/sdk's
 * Server: every runtime entry of the SDK evaluates its whole zod schema module
 * at start-up, which costs more time and memory than the start-up budget of
 * a process every harness session spawns (docs/performance.md, "Start-up").
 */
import type { Readable, Writable } from 'node:stream';
import { JsonLines } from './json-lines.js';

export type RequestId = string | number;

/** JSON-RPC error codes agentbus answers with. */
export const JSON_RPC_ERRORS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
} as const;

/** A request failure the client sees as a JSON-RPC error with this code. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

export interface RequestContext {
  /** The request's id, as the client sent it. */
  readonly id: RequestId;
  /** Aborts when the client cancels the request or the input ends. */
  readonly signal: AbortSignal;
  /** Sends a notification to the client (nothing once the request is aborted). */
  notify(method: string, params: Record<string, unknown>): void;
}

export interface JsonRpcHandlers {
  /** Answers a request; a thrown JsonRpcError becomes that error, anything else an internal error. */
  request(method: string, params: Record<string, unknown> | undefined, context: RequestContext): unknown;
  /** Receives a notification other than `notifications/cancelled`, which the connection handles. */
  notification?(method: string, params: Record<string, unknown> | undefined): void;
  /** Told about a line that was dropped (not JSON, not a JSON-RPC message) or a failed write. */
  dropped?(reason: string): void;
}

export interface JsonRpcConnection {
  /** Resolves once the first message has been handled (a request answered, unless it awaits something), or on close. */
  readonly firstMessage: Promise<void>;
  /** Resolves once the input has ended and every request read was answered, or close() was called. */
  readonly closed: Promise<void>;
  /** Stops reading and aborts every request still running, unanswered. Idempotent. */
  close(): void;
  /** Sends a notification outside any request (e.g. a channel event); nothing once closed or draining. */
  notify(method: string, params: Record<string, unknown>): void;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

type Params = Record<string, unknown> | undefined;

/** What one incoming JSON value is, as the connection acts on it. */
type Incoming =
  | { readonly kind: 'request'; readonly id: RequestId; readonly method: string; readonly params: Params }
  | { readonly kind: 'notification'; readonly method: string; readonly params: Params }
  | { readonly kind: 'cancelled'; readonly requestId: unknown; readonly reason: unknown }
  /** Answered with invalidRequest: a request whose params are not an object. */
  | { readonly kind: 'invalid'; readonly id: RequestId; readonly message: string }
  /** Dropped, with the reason told to the handlers. */
  | { readonly kind: 'dropped'; readonly reason: string }
  /** A response: agentbus sends no requests, so none is awaited. */
  | { readonly kind: 'ignored' };

/** Classifies one JSON value read from the input. */
function incoming(message: unknown): Incoming {
  if (!isObject(message) || message.jsonrpc !== '2.0') return { kind: 'dropped', reason: 'not a JSON-RPC 2.0 message' };
  const { id, method } = message;
  if (typeof method !== 'string') return { kind: 'ignored' };
  if (message.params !== undefined && !isObject(message.params)) {
    return isRequestId(id)
      ? { kind: 'invalid', id, message: `${method}: params must be an object` }
      : { kind: 'dropped', reason: `${method}: params is not an object` };
  }
  const params = message.params as Params;
  if (id === undefined) {
    return method === 'notifications/cancelled' ? { kind: 'cancelled', requestId: params?.requestId, reason: params?.reason } : { kind: 'notification', method, params };
  }
  if (!isRequestId(id)) return { kind: 'dropped', reason: `${method}: id must be a string or a number` };
  return { kind: 'request', id, method, params };
}

/** Calls the handler and hands its outcome, synchronous or not, to `finish` exactly once. */
function runHandler(handlers: JsonRpcHandlers, method: string, params: Params, context: RequestContext, finish: (outcome: { result: unknown } | { error: Error }) => void): void {
  const failed = (error: unknown) => finish({ error: error instanceof Error ? error : new Error(String(error)) });
  try {
    const result = handlers.request(method, params, context);
    if (result instanceof Promise) result.then((value: unknown) => finish({ result: value }), failed);
    else finish({ result });
  } catch (error) {
    failed(error);
  }
}

/** Writes one message as a line. */
function writeLine(output: Writable, message: object): void {
  output.write(`${JSON.stringify(message)}\n`);
}

/** The connection: its state is the requests running, whether the input ended (draining) and whether it is closed (ended). */
class JsonRpcServer implements JsonRpcConnection {
  readonly firstMessage: Promise<void>;
  readonly closed: Promise<void>;
  private readonly running = new Map<RequestId, AbortController>();
  /** The abort reason when the input ended: the request is still answered. */
  private readonly inputEnded = new Error('the client closed its input');
  private draining = false;
  private ended = false;
  private resolveClosed!: () => void;
  private resolveFirst!: () => void;
  private readonly lines: JsonLines;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly handlers: JsonRpcHandlers,
  ) {
    this.closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
    this.firstMessage = new Promise<void>((resolve) => (this.resolveFirst = resolve));
    this.lines = new JsonLines(
      (message) => {
        this.onMessage(message);
        this.resolveFirst();
      },
      (reason) => handlers.dropped?.(reason),
    );
    input.on('data', this.onData);
    input.once('end', this.drain);
    input.once('close', this.drain);
    input.once('error', this.drain);
    output.on('error', (error: Error) => handlers.dropped?.(`writing to the client failed: ${error.message}`));
  }

  /** Stops reading and aborts every request still running, unanswered. Idempotent. */
  readonly close = (): void => {
    if (this.ended) return;
    this.ended = true;
    this.detach();
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
    this.resolveFirst();
    this.resolveClosed();
  };

  /** Sends a notification outside any request; nothing once closed or draining. Bound, like close, so either can be passed on alone. */
  readonly notify = (method: string, params: Record<string, unknown>): void => {
    if (!this.ended && !this.draining) writeLine(this.output, { jsonrpc: '2.0', method, params });
  };

  private readonly onData = (chunk: Buffer | string): void => this.lines.push(chunk);

  /** The input ended: nothing more is read; what was read is answered, then the connection closes. */
  private readonly drain = (): void => {
    if (this.ended || this.draining) return;
    this.draining = true;
    this.detach();
    this.resolveFirst();
    if (this.running.size === 0) return this.close();
    for (const controller of this.running.values()) controller.abort(this.inputEnded);
  };

  private detach(): void {
    this.input.off('data', this.onData);
    this.input.off('end', this.drain);
    this.input.off('close', this.drain);
    this.input.off('error', this.drain);
  }

  private onMessage(message: unknown): void {
    const m = incoming(message);
    if (m.kind === 'request') this.onRequest(m.id, m.method, m.params);
    else if (m.kind === 'notification') this.handlers.notification?.(m.method, m.params);
    else if (m.kind === 'cancelled') {
      if (isRequestId(m.requestId)) this.running.get(m.requestId)?.abort(m.reason);
    } else if (m.kind === 'invalid') this.respond(m.id, { error: new JsonRpcError(JSON_RPC_ERRORS.invalidRequest, m.message) });
    else if (m.kind === 'dropped') this.handlers.dropped?.(m.reason);
  }

  private onRequest(id: RequestId, method: string, params: Params): void {
    const controller = new AbortController();
    this.running.get(id)?.abort(); // a client reusing an id in flight: the older request is abandoned
    this.running.set(id, controller);
    const context: RequestContext = {
      id,
      signal: controller.signal,
      notify: (notifyMethod, notifyParams) => {
        if (!controller.signal.aborted && !this.ended) writeLine(this.output, { jsonrpc: '2.0', method: notifyMethod, params: notifyParams });
      },
    };
    runHandler(this.handlers, method, params, context, (outcome) => {
      if (this.running.get(id) === controller) this.running.delete(id);
      if (!controller.signal.aborted || controller.signal.reason === this.inputEnded) this.respond(id, outcome);
      if (this.draining && this.running.size === 0) this.close();
    });
  }

  private respond(id: RequestId, outcome: { result: unknown } | { error: JsonRpcError | Error }): void {
    if ('result' in outcome) {
      writeLine(this.output, { jsonrpc: '2.0', id, result: outcome.result });
      return;
    }
    const code = outcome.error instanceof JsonRpcError ? outcome.error.code : JSON_RPC_ERRORS.internal;
    writeLine(this.output, { jsonrpc: '2.0', id, error: { code, message: outcome.error.message || 'internal error' } });
  }
}

/** Starts reading `input` at once; messages already waiting in the pipe are handled in order. */
export function serveJsonRpc(input: Readable, output: Writable, handlers: JsonRpcHandlers): JsonRpcConnection {
  return new JsonRpcServer(input, output, handlers);
}
