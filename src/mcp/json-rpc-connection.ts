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

/** Longest line accepted, as the SDK's stdio transport: a larger one is a broken client. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

/** Starts reading `input` at once; messages already waiting in the pipe are handled in order. */
export function serveJsonRpc(input: Readable, output: Writable, handlers: JsonRpcHandlers): JsonRpcConnection {
  const running = new Map<RequestId, AbortController>();
  /** The abort reason when the input ended: the request is still answered. */
  const inputEnded = new Error('the client closed its input');
  let draining = false;
  let pending: Buffer | undefined;
  let ended = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let resolveFirst!: () => void;
  const firstMessage = new Promise<void>((resolve) => (resolveFirst = resolve));

  const write = (message: object): void => {
    output.write(`${JSON.stringify(message)}\n`);
  };

  const respond = (id: RequestId, outcome: { result: unknown } | { error: JsonRpcError | Error }): void => {
    if ('result' in outcome) {
      write({ jsonrpc: '2.0', id, result: outcome.result });
      return;
    }
    const code = outcome.error instanceof JsonRpcError ? outcome.error.code : JSON_RPC_ERRORS.internal;
    write({ jsonrpc: '2.0', id, error: { code, message: outcome.error.message || 'internal error' } });
  };

  const onRequest = (id: RequestId, method: string, params: Record<string, unknown> | undefined): void => {
    const controller = new AbortController();
    running.get(id)?.abort(); // a client reusing an id in flight: the older request is abandoned
    running.set(id, controller);
    const context: RequestContext = {
      id,
      signal: controller.signal,
      notify: (notifyMethod, notifyParams) => {
        if (!controller.signal.aborted && !ended) write({ jsonrpc: '2.0', method: notifyMethod, params: notifyParams });
      },
    };
    const finish = (outcome: { result: unknown } | { error: Error }): void => {
      if (running.get(id) === controller) running.delete(id);
      if (!controller.signal.aborted || controller.signal.reason === inputEnded) respond(id, outcome);
      if (draining && running.size === 0) close();
    };
    try {
      const result = handlers.request(method, params, context);
      if (result instanceof Promise) {
        result.then(
          (value: unknown) => finish({ result: value }),
          (error: unknown) => finish({ error: error instanceof Error ? error : new Error(String(error)) }),
        );
      } else {
        finish({ result });
      }
    } catch (error) {
      finish({ error: error instanceof Error ? error : new Error(String(error)) });
    }
  };

  const onMessage = (message: unknown): void => {
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      handlers.dropped?.('not a JSON-RPC 2.0 message');
      return;
    }
    const { id, method } = message;
    const params = message.params === undefined || isObject(message.params) ? (message.params as Record<string, unknown> | undefined) : null;
    if (typeof method !== 'string') return; // a response: agentbus sends no requests, so none is awaited
    if (params === null) {
      if (isRequestId(id)) respond(id, { error: new JsonRpcError(JSON_RPC_ERRORS.invalidRequest, `${method}: params must be an object`) });
      else handlers.dropped?.(`${method}: params is not an object`);
      return;
    }
    if (id === undefined) {
      if (method === 'notifications/cancelled') {
        const requestId = params?.requestId;
        if (isRequestId(requestId)) running.get(requestId)?.abort(params?.reason);
        return;
      }
      handlers.notification?.(method, params);
      return;
    }
    if (!isRequestId(id)) {
      handlers.dropped?.(`${method}: id must be a string or a number`);
      return;
    }
    onRequest(id, method, params);
  };

  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    pending = pending === undefined ? bytes : Buffer.concat([pending, bytes]);
    for (;;) {
      const newline = pending.indexOf(0x0a);
      if (newline < 0) break;
      const line = pending.toString('utf8', 0, newline).replace(/\r$/, '');
      pending = pending.subarray(newline + 1);
      if (line.trim() === '') continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        handlers.dropped?.('a line that is not JSON');
        continue;
      }
      onMessage(message);
      resolveFirst();
    }
    if (pending.length === 0) pending = undefined;
    else if (pending.length > MAX_LINE_BYTES) {
      pending = undefined;
      handlers.dropped?.(`a line longer than ${MAX_LINE_BYTES} bytes`);
    }
  };

  const detach = (): void => {
    input.off('data', onData);
    input.off('end', drain);
    input.off('close', drain);
    input.off('error', drain);
  };

  const close = (): void => {
    if (ended) return;
    ended = true;
    detach();
    for (const controller of running.values()) controller.abort();
    running.clear();
    resolveFirst();
    resolveClosed();
  };

  /** The input ended: nothing more is read; what was read is answered, then the connection closes. */
  const drain = (): void => {
    if (ended || draining) return;
    draining = true;
    detach();
    resolveFirst();
    if (running.size === 0) return close();
    for (const controller of running.values()) controller.abort(inputEnded);
  };

  input.on('data', onData);
  input.once('end', drain);
  input.once('close', drain);
  input.once('error', drain);
  output.on('error', (error: Error) => handlers.dropped?.(`writing to the client failed: ${error.message}`));
  const notify = (method: string, params: Record<string, unknown>): void => {
    if (!ended && !draining) write({ jsonrpc: '2.0', method, params });
  };
  return { firstMessage, closed, close, notify };
}
