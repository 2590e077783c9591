/**
 * The MCP server on the SDK's low-level Server: tools/list from the tool
 * definitions, tools/call dispatched to the bus operations (which validate) and answered with
 * structuredContent plus the same JSON as text.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { BusContext } from '../bus/bus-context.js';
import { BusError } from '../bus/bus-error.js';
import { SERVER_INSTRUCTIONS } from './instructions.js';
import { inputJsonSchema, outputJsonSchema } from './json-schema.js';
import type { ToolCallExtra, ToolDefinition } from './tool-definition.js';
import { errorResult, successResult, toBusError, type ToolResult } from './tool-result.js';

export interface McpServerOptions {
  readonly ctx: BusContext;
  readonly tools: readonly ToolDefinition[];
  readonly version: string;
}

export function createMcpServer({ ctx, tools, version }: McpServerOptions): Server {
  const server = new Server(
    { name: 'agentbus', version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listing = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: inputJsonSchema(t.input),
    outputSchema: outputJsonSchema(t.output),
    annotations: t.annotations,
  }));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<ToolResult> => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return errorResult(
        new BusError('validation', `unknown tool "${request.params.name}"; the tools are: ${tools.map((t) => t.name).join(', ')}`, {
          field: 'name',
        }),
      );
    }
    const progressToken = request.params._meta?.progressToken;
    const callExtra: ToolCallExtra = {
      signal: extra.signal,
      progress: (progress, total, message) => {
        if (progressToken === undefined || extra.signal.aborted) return;
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) },
          })
          .catch(() => undefined);
      },
    };
    try {
      const result = await tool.handler(ctx, request.params.arguments ?? {}, callExtra);
      return successResult(result as Record<string, unknown>);
    } catch (thrown) {
      const { error, unexpected } = toBusError(thrown);
      if (unexpected) {
        ctx.log.error('tool failed', { tool: tool.name, error: thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown) });
      }
      return errorResult(error);
    }
  });
  return server;
}
