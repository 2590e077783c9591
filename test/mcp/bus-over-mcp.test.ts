import { describe, expect, it } from 'vitest';
import { RegisterOutput } from '../../src/bus/identity.js';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

describe('the bus over MCP, real processes', () => {
  it('lists every tool with an Agentbus description, annotations and an object outputSchema', async () => {
    const a = await startMcp(tempDir());
    const { tools } = await a.client.listTools();
    const names = tools.map((t) => t.name).sort();
    for (const name of ['register', 'create_channel', 'list_channels', 'subscribe', 'unsubscribe', 'send', 'receive', 'history', 'get_memory', 'edit_memory', 'delete_memory', 'discover']) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      expect(tool.description).toMatch(/^Agentbus: /);
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.annotations).toEqual({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: expect.any(Boolean),
      });
    }
    const init = a.client.getServerVersion();
    expect(init?.name).toBe('agentbus');
    expect(a.client.getInstructions()).toMatch(/register/);
  });

  it('delivers between processes with ack, redelivery and a long-poll woken by the other process', async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([startMcp(dir), startMcp(dir)]);
    const alice = toolAnswer(RegisterOutput, await a.call('register', { name: 'Alice' }), 'register');
    const bob = toolAnswer(RegisterOutput, await b.call('register', { name: 'Bob' }), 'register');
    expect(alice.display_name).toBe('Alice');
    await a.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    await b.call('subscribe', { as: bob.display_name, channel: 'work' });

    const waiting = b.call('receive', { as: 'Bob', wait_seconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    const sent = toolAnswer(SendOutput, await a.call('send', { as: 'Alice', channel: 'work', content: 'hello Bob' }), 'send');
    const got = toolAnswer(ReceiveOutput, await waiting, 'receive');
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]).toMatchObject({ seq: sent.seq, channel: 'work', sender: 'Alice', content: 'hello Bob' });
    expect(got.redelivered).toBe(false);

    const again = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Bob' }), 'receive');
    expect(again.redelivered).toBe(true);
    expect(again.batch_token).toBe(got.batch_token);
    expect(again.messages.map((m) => m.seq)).toEqual([sent.seq]);

    const acked = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Bob', ack: got.batch_token }), 'receive');
    expect(acked.messages).toEqual([]);
    const stale = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Bob', ack: got.batch_token }), 'receive');
    expect(stale.notices.map((n) => n.kind)).toContain('ack_ignored');
  });

  it('gives two processes registering one name at once distinct names', async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([startMcp(dir), startMcp(dir)]);
    const names = await Promise.all([a, b].map(async (p) => toolAnswer(RegisterOutput, await p.call('register', { name: 'Sam' }), 'register').display_name));
    expect(names.sort()).toEqual(['Sam', 'Sam2']);
  });

  it('a running process keeps its name however old its heartbeat looks; a newcomer gets a suffix', async () => {
    const dir = tempDir();
    const a = await startMcp(dir);
    await a.call('register', { name: 'Sam' });
    // Age Sam's heartbeat by two hours, as a clock set forward or a long stall would make it look.
    const { db } = await openTestDatabase(dir);
    db.transaction(() => db.run("UPDATE sessions SET heartbeat = heartbeat - 7200000, heartbeat_mono = heartbeat_mono - 7200000 WHERE sender = 'Sam'"));
    db.close();
    const b = await startMcp(dir);
    expect((await b.call('register', { name: 'Sam' })).display_name).toBe('Sam2');
    const still = await a.client.callTool({ name: 'list_channels', arguments: { as: 'Sam' } });
    expect(still.isError).toBeFalsy();
  });

  it('answers bad arguments with a validation error naming the field, and stays up', async () => {
    const a = await startMcp(tempDir());
    const missing = await a.client.callTool({ name: 'send', arguments: { channel: 'general', content: 'x' } });
    expect(missing.isError).toBe(true);
    const missingError = toolAnswer(ToolError, missing.structuredContent, 'send').error;
    expect(missingError.code).toBe('validation');
    expect(missingError.message).toContain('as');
    const extra = await a.client.callTool({ name: 'register', arguments: { name: 'Zed', colour: 'blue' } });
    expect(toolAnswer(ToolError, extra.structuredContent, 'register').error.code).toBe('validation');
    expect((await a.call('register', { name: 'Zed' })).display_name).toBe('Zed');
  });

  it('sends progress while a receive waits, and a cancelled wait creates no batch', async () => {
    const dir = tempDir();
    const a = await startMcp(dir);
    await a.call('register', { name: 'Ann' });
    await a.call('create_channel', { as: 'Ann', name: 'c', kind: 'ordinary' });
    await a.call('subscribe', { as: 'Ann', channel: 'c' });
    const progress: number[] = [];
    const waited = await a.client.callTool(
      { name: 'receive', arguments: { as: 'Ann', wait_seconds: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(toolAnswer(ReceiveOutput, waited.structuredContent, 'receive').messages).toEqual([]);
    expect(progress.length).toBeGreaterThanOrEqual(1);

    const controller = new AbortController();
    const cancelled = a.client.callTool({ name: 'receive', arguments: { as: 'Ann', wait_seconds: 30 } }, undefined, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    const b = await startMcp(dir);
    await b.call('register', { name: 'Ben' });
    await b.call('send', { as: 'Ben', channel: 'c', content: 'after the cancel' });
    const next = toolAnswer(ReceiveOutput, await a.call('receive', { as: 'Ann' }), 'receive');
    expect(next.redelivered).toBe(false);
    expect(next.messages.map((m) => m.content)).toEqual(['after the cancel']);
  });

  it('shuts down cleanly on SIGTERM: exits and releases its names', async () => {
    const dir = tempDir();
    const a = await startMcp(dir);
    await a.call('register', { name: 'Tess' });
    const pid = a.transport.pid;
    expect(pid).toBeTypeOf('number');
    const exited = new Promise<void>((resolve) => {
      a.transport.onclose = () => resolve();
    });
    process.kill(pid!, 'SIGTERM');
    await exited;
    const { db } = await openTestDatabase(dir);
    expect(db.all('SELECT sender FROM sessions')).toEqual([]);
    db.close();
  });
});
