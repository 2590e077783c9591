/**
 * The MCP server: `initialize`, `ping`, `tools/list` from the tool definitions,
 * and `tools/call` dispatched to the bus operations (which validate) and
 * answered with structuredContent plus the same JSON as text, over the
 * JSON-RPC connection of json-rpc-connection.ts.
 */
import { dirname } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { BusContext } from '../bus/bus-context.js';
import { BusError } from '../bus/bus-error.js';
import type { DbError } from '../db/contract/db-error.js';
import type { Logger } from '../log.js';
import { CHANNEL_CAPABILITY, CHANNEL_INSTRUCTIONS } from './channel-instructions.js';
import { SERVER_INSTRUCTIONS } from './instructions.js';
import { inputJsonSchema, outputJsonSchema } from './json-schema.js';
import { JSON_RPC_ERRORS, JsonRpcError, serveJsonRpc, type JsonRpcConnection, type RequestContext } from './json-rpc-connection.js';
import { negotiateProtocolVersion } from './protocol-version.js';
import type { ToolCallExtra, ToolDefinition } from './tool-definition.js';
import { errorResult, successResult, toBusError, type ToolResult } from './tool-result.js';

/** What the server needs once the bus module has loaded: tools/list waits for it, initialize does not. */
export interface McpBackend {
  readonly tools: readonly ToolDefinition[];
  readonly log: Logger;
  /** Runs after every tool call, before its result is sent (the inbox monitor looks again here). Must not throw. */
  readonly afterToolCall?: () => void;
  /** Asked before every tool call: an error means the database must not be used any more (its shared files were replaced). */
  readonly storageCheck?: () => DbError | undefined;
}

export interface McpServerOptions {
  readonly backend: Promise<McpBackend>;
  /** The bus, once the database is open: each tool call asks (and waits); a rejection is answered as the call's error. */
  readonly context: () => Promise<BusContext>;
  readonly version: string;
  /** Declare Claude Code's channel capability (and explain `<channel>` events in the instructions). */
  readonly channels?: boolean;
}

export interface McpServer {
  /** Serves one client on these streams (stdin, stdout) until its input ends. */
  serve(input: Readable, output: Writable): JsonRpcConnection;
}

const invalidParams = (message: string): JsonRpcError => new JsonRpcError(JSON_RPC_ERRORS.invalidParams, message);

/** The answer to `initialize`: the protocol version both speak, the capabilities (channels when on), the instructions. */
function initializeResult(params: Record<string, unknown> | undefined, version: string, channels: boolean): object {
  const requested = params?.protocolVersion;
  if (typeof requested !== 'string') throw invalidParams('initialize: params.protocolVersion must be a string, e.g. "2025-06-18"');
  return {
    protocolVersion: negotiateProtocolVersion(requested),
    capabilities: { tools: {}, ...(channels ? { experimental: { [CHANNEL_CAPABILITY]: {} } } : {}) },
    serverInfo: { name: 'agentbus', version },
    instructions: channels ? `${SERVER_INSTRUCTIONS}\n\n${CHANNEL_INSTRUCTIONS}` : SERVER_INSTRUCTIONS,
  };
}

/** What a tool handler gets besides its arguments: the request's abort signal, and progress notifications when the client gave a progressToken. */
function toolCallExtra(params: Record<string, unknown> | undefined, request: RequestContext): ToolCallExtra {
  const meta = params?._meta;
  const progressToken = typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
  return {
    signal: request.signal,
    progress: (progress, total, message) => {
      if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return;
      request.notify('notifications/progress', {
        progressToken,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
    },
  };
}

/** Answers tools/call: a bad call is a JSON-RPC error; a tool's failure, an unknown tool included, is a tool error result the model reads. */
async function callTool(
  { backend, context }: Pick<McpServerOptions, 'backend' | 'context'>,
  params: Record<string, unknown> | undefined,
  request: RequestContext,
): Promise<ToolResult> {
  const name = params?.name;
  if (typeof name !== 'string') throw invalidParams('tools/call: params.name must be the name of a tool (a string)');
  const args = params?.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw invalidParams(`tools/call ${name}: params.arguments must be an object of the tool's arguments`);
  }
  const { tools, log, storageCheck, afterToolCall } = await backend;
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) {
    return errorResult(
      new BusError('validation', `unknown tool "${name}"; the tools are: ${tools.map((t) => t.name).join(', ')}`, { field: 'name' }),
    );
  }
  const extra = toolCallExtra(params, request);
  let dataDir: string | undefined;
  try {
    const ctx = await context();
    dataDir = dirname(ctx.db.path);
    const refused = storageCheck?.();
    if (refused !== undefined) throw refused;
    const result = await tool.handler(ctx, args, extra);
    return successResult(result as Record<string, unknown>);
  } catch (thrown) {
    // dataDir lets an I/O error on a full disk be told apart and answered as disk_full.
    const { error, unexpected } = toBusError(thrown, dataDir);
    if (unexpected) {
      log.error('tool failed', { tool: tool.name, error: thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown) });
    }
    return errorResult(error);
  } finally {
    afterToolCall?.();
  }
}

export function createMcpServer({ backend, context, version, channels = false }: McpServerOptions): McpServer {
  // Built on the first tools/list, not before the initialize answer: a harness waits for that one.
  let listing: Promise<object[]> | undefined;
  const listTools = (): Promise<object[]> =>
    (listing ??= backend.then(({ tools }) =>
      tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: inputJsonSchema(t.input),
        outputSchema: outputJsonSchema(t.output, t.errorDetails),
        annotations: t.annotations,
      })),
    ));

  return {
    serve: (input, output) =>
      serveJsonRpc(input, output, {
        request(method, params, request) {
          switch (method) {
            case 'initialize':
              return initializeResult(params, version, channels);
            case 'ping':
              return {};
            case 'tools/list':
              return listTools().then((tools) => ({ tools }));
            case 'tools/call':
              return callTool({ backend, context }, params, request);
            default:
              throw new JsonRpcError(JSON_RPC_ERRORS.methodNotFound, `Method not found: ${method}`);
          }
        },
        dropped(reason) {
          backend.then(({ log }) => log.debug('mcp input dropped', { reason })).catch(() => undefined);
        },
      }),
  };
}
