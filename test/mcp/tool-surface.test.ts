/**
 * The tool surface as a model reads it, from a real server's tools/list and
 * initialize: every input property described (Codex strips limits and
 * defaults, so the words must carry them), the first calls spelled out in the
 * instructions, and an empty receive's null batch_token accepted back as ack.
 */
import { describe, expect, it } from 'vitest';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

type Json = Record<string, any>;

/** Every property schema in a JSON Schema, with its dotted path (array items as `[]`). */
function properties(schema: Json, path: string): { path: string; schema: Json }[] {
  const found: { path: string; schema: Json }[] = [];
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    found.push({ path: `${path}.${key}`, schema: child });
    found.push(...nested(child, `${path}.${key}`));
  }
  return found;
}

function nested(schema: Json, path: string): { path: string; schema: Json }[] {
  const found = properties(schema, path);
  if (schema.items !== undefined && !Array.isArray(schema.items)) found.push(...nested(schema.items as Json, `${path}[]`));
  for (const option of (schema.anyOf ?? []) as Json[]) found.push(...nested(option, path));
  if (typeof schema.additionalProperties === 'object') found.push(...nested(schema.additionalProperties as Json, `${path}{}`));
  return found;
}

describe('the tool surface a model reads', () => {
  it('describes every input property of every tool, and says in words the defaults that matter', async () => {
    const server = await startMcp(tempDir());
    const { tools } = await server.client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(13);
    let checked = 0;
    for (const tool of tools) {
      for (const { path, schema } of properties(tool.inputSchema as Json, tool.name)) {
        expect(typeof schema.description, `${path} has no description`).toBe('string');
        expect((schema.description as string).length, path).toBeGreaterThan(10);
        checked++;
      }
    }
    // 13 tools, 60-odd properties: the walk really visited them (nested reference fields included).
    expect(checked).toBeGreaterThan(55);
    const byName = new Map(tools.map((t) => [t.name, t.inputSchema as Json]));
    // Codex drops `default`, min/max and lengths from what its model sees: the words must carry them.
    expect(byName.get('subscribe')?.properties.from.description).toMatch(/[Dd]efault "now"/);
    expect(byName.get('register')?.properties.resume.description).toMatch(/[Dd]efault true/);
    expect(byName.get('receive')?.properties.wait_seconds.description).toMatch(/default 0/);
    expect(byName.get('receive')?.properties.ack.description).toMatch(/null/);
    expect(byName.get('register')?.properties.name.description).toMatch(/128/);
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
    const empty = (await b.call('receive', { as: 'Bo' })) as Json;
    expect(empty).toMatchObject({ messages: [], batch_token: null });

    const again = await b.client.callTool({ name: 'receive', arguments: { as: 'Bo', ack: empty.batch_token } });
    expect(again.isError ?? false).toBe(false);
    expect(again.structuredContent).toMatchObject({ messages: [], batch_token: null, notices: [] });

    // With a message waiting, ack: null acknowledges nothing and the batch is delivered; its token then acks it.
    await a.call('send', { as: 'Ann', channel: 'general', content: 'hello' });
    const got = (await b.call('receive', { as: 'Bo', ack: null })) as Json;
    expect(got.messages.map((m: Json) => m.content)).toEqual(['hello']);
    expect(got.notices).toEqual([]);
    const redelivered = (await b.call('receive', { as: 'Bo', ack: null })) as Json;
    expect(redelivered).toMatchObject({ redelivered: true, batch_token: got.batch_token });
    const acked = (await b.call('receive', { as: 'Bo', ack: got.batch_token })) as Json;
    expect(acked).toMatchObject({ messages: [], batch_token: null, notices: [] });

    // Anything else that is not a token is still refused, naming the field.
    const bad = await b.client.callTool({ name: 'receive', arguments: { as: 'Bo', ack: 42 } });
    expect(bad.isError).toBe(true);
    expect((bad.structuredContent as Json).error).toMatchObject({ code: 'validation' });
    expect((bad.structuredContent as Json).error.message).toMatch(/^ack: /);
  });
});
