/**
 * A local stand-in for the model APIs the harnesses speak, on 127.0.0.1: the
 * Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex) and
 * the Gemini API (Gemini CLI), all streamed as the real services stream them.
 * A script decides each turn of the agent loop (call a tool, or answer with
 * text); every request is recorded so a test can assert what the model saw.
 * Requests outside the agent loop (titles, routing, token counts) get a
 * harmless answer and are recorded too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Dialect = 'anthropic' | 'openai' | 'gemini';

/** One request of the agent loop, as the script sees it. */
export interface Turn {
  readonly dialect: Dialect;
  /** 0 for the first agent-loop request, then 1, 2, ... */
  readonly index: number;
  /** Every tool name offered, as the model would call it (namespaced tools as `namespace__name`). */
  readonly tools: readonly string[];
  /** The whole request body as JSON text, for searching what the model saw. */
  readonly text: string;
}

export type Reply = { readonly tool: { readonly name: string; readonly args: Record<string, unknown> } } | { readonly text: string };

export interface RecordedRequest {
  readonly path: string;
  readonly body: unknown;
  /** Set for agent-loop requests: the turn it was. */
  readonly turn?: number;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}

function sse(res: ServerResponse, events: readonly (readonly [string | undefined, unknown])[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

let ids = 0;
const id = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(ids++).toString(36)}`;

type Body = Record<string, any>;

function anthropic(res: ServerResponse, body: Body, reply: Reply): void {
  const message = { id: id('msg'), type: 'message', role: 'assistant', model: body.model ?? 'model', stop_sequence: null };
  const isTool = 'tool' in reply;
  if (body.stream !== true) {
    const content = isTool ? [{ type: 'tool_use', id: id('toolu'), name: reply.tool.name, input: reply.tool.args }] : [{ type: 'text', text: reply.text }];
    json(res, { ...message, content, stop_reason: isTool ? 'tool_use' : 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } });
    return;
  }
  const block = isTool ? { type: 'tool_use', id: id('toolu'), name: reply.tool.name, input: {} } : { type: 'text', text: '' };
  const delta = isTool ? { type: 'input_json_delta', partial_json: JSON.stringify(reply.tool.args) } : { type: 'text_delta', text: reply.text };
  sse(res, [
    ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: block }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: isTool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

function openai(res: ServerResponse, reply: Reply): void {
  let item: Record<string, unknown>;
  if ('tool' in reply) {
    // Codex offers MCP tools in a namespace (`mcp__agentbus`) and expects the call to name both.
    const m = /^(mcp__.+?)__(.+)$/.exec(reply.tool.name);
    item = {
      type: 'function_call',
      id: id('fc'),
      call_id: id('call'),
      name: m === null ? reply.tool.name : m[2],
      ...(m === null ? {} : { namespace: m[1] }),
      arguments: JSON.stringify(reply.tool.args),
      status: 'completed',
    };
  } else {
    item = { type: 'message', id: id('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  }
  const response = { id: id('resp'), object: 'response', status: 'in_progress', output: [] as unknown[] };
  const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  sse(res, [
    ['response.created', { type: 'response.created', response }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } }],
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    ['response.completed', { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } }],
  ]);
}

function gemini(res: ServerResponse, path: string, reply: Reply): void {
  const part = 'tool' in reply ? { functionCall: { name: reply.tool.name, args: reply.tool.args } } : { text: reply.text };
  const chunk = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'stand-in',
  };
  if (path.includes(':streamGenerateContent')) sse(res, [[undefined, chunk]]);
  else json(res, chunk);
}

/** Gemini CLI's side requests ask for JSON matching a schema (routing, next speaker): a plausible object. */
function geminiSideAnswer(body: Body): Reply {
  const schema = JSON.stringify(body.generationConfig ?? {});
  if (schema.includes('complexity_score')) return { text: JSON.stringify({ complexity_reasoning: 'a scripted test turn', complexity_score: 1 }) };
  if (schema.includes('next_speaker')) return { text: JSON.stringify({ reasoning: 'the turn is complete', next_speaker: 'user' }) };
  return { text: 'ok' };
}

/**
 * Starts the stand-in. `script` answers agent-loop requests: those that
 * offer a tool whose name contains `loopMarker` (the agentbus tools). A
 * Claude Code request made before its MCP servers connected (no agentbus
 * tools, but WaitForMcpServers) is answered with that tool and not counted.
 */
export async function startModelServer(script: (turn: Turn) => Reply | Promise<Reply>, loopMarker = 'agentbus'): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  let turns = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? '/';
    const body = (await readBody(req)) as Body;
    const record = (turn?: number): void => {
      requests.push({ path, body, ...(turn === undefined ? {} : { turn }) });
    };
    if (path.startsWith('/v1/messages/count_tokens')) return (record(), json(res, { input_tokens: 10 }));
    if (path.startsWith('/v1/messages')) {
      const tools: string[] = (body.tools ?? []).map((t: Body) => String(t.name));
      if (!tools.some((t) => t.includes(loopMarker))) {
        record();
        return anthropic(res, body, tools.includes('WaitForMcpServers') ? { tool: { name: 'WaitForMcpServers', args: {} } } : { text: 'ok' });
      }
      const turn = turns++;
      record(turn);
      return anthropic(res, body, await script({ dialect: 'anthropic', index: turn, tools, text: JSON.stringify(body) }));
    }
    if (path.startsWith('/v1/responses')) {
      const tools: string[] = (body.tools ?? []).flatMap((t: Body) =>
        t.type === 'namespace' ? (t.tools as Body[]).map((f) => `${t.name}__${f.name}`) : [String(t.name ?? t.type)],
      );
      if (!tools.some((t) => t.includes(loopMarker))) return (record(), openai(res, { text: 'ok' }));
      const turn = turns++;
      record(turn);
      return openai(res, await script({ dialect: 'openai', index: turn, tools, text: JSON.stringify(body) }));
    }
    if (path.includes(':streamGenerateContent') || path.includes(':generateContent')) {
      const tools: string[] = (body.tools ?? []).flatMap((t: Body) => (t.functionDeclarations ?? []).map((f: Body) => String(f.name)));
      if (!tools.some((t) => t.includes(loopMarker))) return (record(), gemini(res, path, geminiSideAnswer(body)));
      const turn = turns++;
      record(turn);
      return gemini(res, path, await script({ dialect: 'gemini', index: turn, tools, text: JSON.stringify(body) }));
    }
    if (path.includes(':countTokens')) return (record(), json(res, { totalTokens: 10 }));
    record();
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{}');
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
