/**
 * The tool surface as a model reads it, from a real server's tools/list and
 * initialize: every input property described (Codex strips limits and
 * defaults, so the words must carry them), the first calls spelled out in the
 * instructions, and an empty receive's null batch_token accepted back as ack.
 */
import { describe, expect, it } from 'vitest';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { jsonAt } from '../support/json-at.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` as a schema object; fails the test naming `path` when it is not one. */
function schemaAt(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw new Error(`${path}: not a schema object: ${JSON.stringify(value)}`);
  return value;
}

/** Every property schema in a JSON Schema, with its dotted path (array items as `[]`). */
function properties(schema: JsonObject, path: string): { path: string; schema: JsonObject }[] {
  const found: { path: string; schema: JsonObject }[] = [];
  for (const [key, value] of Object.entries(schema.properties === undefined ? {} : schemaAt(schema.properties, `${path} properties`))) {
    const child = schemaAt(value, `${path}.${key}`);
    found.push({ path: `${path}.${key}`, schema: child });
    found.push(...nested(child, `${path}.${key}`));
  }
  return found;
}

function nested(schema: JsonObject, path: string): { path: string; schema: JsonObject }[] {
  const found = properties(schema, path);
  if (schema.items !== undefined && !Array.isArray(schema.items)) found.push(...nested(schemaAt(schema.items, `${path}[]`), `${path}[]`));
  const options = schema.anyOf ?? [];
  if (!Array.isArray(options)) throw new Error(`${path}: anyOf is not an array`);
  for (const option of options) found.push(...nested(schemaAt(option, path), path));
  if (typeof schema.additionalProperties === 'object') found.push(...nested(schemaAt(schema.additionalProperties, `${path}{}`), `${path}{}`));
  return found;
}

describe('the tool surface a model reads', () => {
  it('describes every input property of every tool, and says in words the defaults that matter', async () => {
    const server = await startMcp(tempDir());
    const { tools } = await server.client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(13);
    let checked = 0;
    for (const tool of tools) {
      for (const { path, schema } of properties(tool.inputSchema, tool.name)) {
        expect(typeof schema.description, `${path} has no description`).toBe('string');
        expect(String(schema.description).length, path).toBeGreaterThan(10);
        checked++;
      }
    }
    // 13 tools, 60-odd properties: the walk really visited them (nested reference fields included).
    expect(checked).toBeGreaterThan(55);
    const byName = new Map(tools.map((t) => [t.name, t.inputSchema]));
    // Codex drops `default`, min/max and lengths from what its model sees: the words must carry them.
    expect(jsonAt(byName.get('subscribe'), 'properties', 'from', 'description')).toMatch(/[Dd]efault "now"/);
    expect(jsonAt(byName.get('register'), 'properties', 'resume', 'description')).toMatch(/[Dd]efault true/);
    expect(jsonAt(byName.get('receive'), 'properties', 'wait_seconds', 'description')).toMatch(/default 0/);
    expect(jsonAt(byName.get('receive'), 'properties', 'ack', 'description')).toMatch(/null/);
    expect(jsonAt(byName.get('register'), 'properties', 'name', 'description')).toMatch(/128/);
  });

  it('initialize instructions give the first calls in order: register, subscribe, send, receive with ack', async () => {
    const server = await startMcp(tempDir());
    const instructions = server.client.getInstructions() ?? '';
    const order = ['register', 'subscribe', 'send', 'receive', 'ack'].map((word) => instructions.indexOf(word));
    expect(order.every((i) => i >= 0), instructions).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    expect(instructions).toMatch(/general/);
    expect(instructions).toMatch(/memory/);
  });

  it('accepts an empty receive\'s null batch_token back as ack: nothing to acknowledge', async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([startMcp(dir), startMcp(dir)]);
    await a.call('register', { name: 'Ann' });
    await b.call('register', { name: 'Bo' });
    await b.call('subscribe', { as: 'Bo', channel: 'general' });
    const empty = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Bo' }), 'receive');
    expect(empty).toMatchObject({ messages: [], batch_token: null });

    const again = await b.client.callTool({ name: 'receive', arguments: { as: 'Bo', ack: empty.batch_token } });
    expect(again.isError ?? false).toBe(false);
    expect(again.structuredContent).toMatchObject({ messages: [], batch_token: null, notices: [] });

    // With a message waiting, ack: null acknowledges nothing and the batch is delivered; its token then acks it.
    await a.call('send', { as: 'Ann', channel: 'general', content: 'hello' });
    const got = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Bo', ack: null }), 'receive');
    expect(got.messages.map((m) => m.content)).toEqual(['hello']);
    expect(got.notices).toEqual([]);
    const redelivered = await b.call('receive', { as: 'Bo', ack: null });
    expect(redelivered).toMatchObject({ redelivered: true, batch_token: got.batch_token });
    const acked = await b.call('receive', { as: 'Bo', ack: got.batch_token });
    expect(acked).toMatchObject({ messages: [], batch_token: null, notices: [] });

    // Anything else that is not a token is still refused, naming the field.
    const bad = await b.client.callTool({ name: 'receive', arguments: { as: 'Bo', ack: 42 } });
    expect(bad.isError).toBe(true);
    const { error } = toolAnswer(ToolError, bad.structuredContent, 'receive');
    expect(error).toMatchObject({ code: 'validation' });
    expect(error.message).toMatch(/^ack: /);
  });
});
