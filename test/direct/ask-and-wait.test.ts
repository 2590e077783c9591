/**
 * Ask-and-wait (receive with reply_to) and the sender's view of who has read
 * a direct message (message_status), over real `agentbus mcp` processes.
 */
import { describe, expect, it } from 'vitest';
import { MessageStatusOutput } from '../../src/bus/message-status.js';
import { ReceiveOutput, type ReceiveResult } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { toolAnswer, ToolError } from '../support/tool-answer.js';

async function registered(dir: string, name: string): Promise<McpProcess> {
  const server = await startMcp(dir);
  expect((await server.call('register', { name })).display_name).toBe(name);
  return server;
}

async function receiveAs(server: McpProcess, as: string, args: Record<string, unknown> = {}): Promise<ReceiveResult> {
  return toolAnswer(ReceiveOutput, await server.call('receive', { as, ...args }), 'receive');
}

async function sendAs(server: McpProcess, as: string, args: Record<string, unknown>): Promise<number> {
  return toolAnswer(SendOutput, await server.call('send', { as, ...args }), 'send').seq;
}

describe('ask and wait', () => {
  it('returns the direct reply while a flood on general goes on; the flood and other direct messages are delivered afterwards, each once', async () => {
    const dir = tempDir();
    const [alice, bob, flood] = await Promise.all([registered(dir, 'Alice'), registered(dir, 'Bob'), registered(dir, 'Flood')]);
    await alice.call('subscribe', { as: 'Alice', channel: 'general' });

    const question = await sendAs(alice, 'Alice', { to: ['Bob'], content: 'does main build?' });
    const waiting = receiveAs(alice, 'Alice', { reply_to: question, wait_seconds: 30 });
    let flooding = true;
    const flooded: number[] = [];
    const flooder = (async () => {
      while (flooding) flooded.push(await sendAs(flood, 'Flood', { channel: 'general', content: `noise ${flooded.length}` }));
    })();
    // A direct message that is no reply, and a reply to another seq: neither is for this wait.
    const aside = await sendAs(flood, 'Flood', { to: ['Alice'], content: 'unrelated' });
    const otherReply = await sendAs(flood, 'Flood', { to: ['Alice'], reply_to: aside, content: 'reply to something else' });

    const asked = await receiveAs(bob, 'Bob', { wait_seconds: 10 });
    expect(asked.messages).toMatchObject([{ seq: question, sender: 'Alice', direct: true }]);
    while (flooded.length < 20) await new Promise((r) => setTimeout(r, 20));
    const reply = await sendAs(bob, 'Bob', { to: ['Alice'], reply_to: question, content: 'yes' });

    const answered = await waiting;
    flooding = false;
    await flooder;
    expect(answered.messages.map((m) => m.seq)).toEqual([reply]);
    expect(answered.messages[0]).toMatchObject({ direct: true, to: ['Alice'], reply_to: question, content: 'yes' });
    expect(answered.redelivered).toBe(false);

    // Acknowledging the reply in the next plain receive; everything else arrives, each message once, the reply not again.
    const seen: number[] = [];
    let ack: string | null = answered.batch_token;
    for (;;) {
      const got: ReceiveResult = await receiveAs(alice, 'Alice', { ack, count: 50 });
      if (got.messages.length === 0) break;
      seen.push(...got.messages.map((m) => m.seq));
      ack = got.batch_token;
    }
    expect(seen).toEqual([...flooded, aside, otherReply].sort((x, y) => x - y));
  });

  it('wakes on the bell for a reply sent after it started, and a reply it took is not delivered again', async () => {
    const dir = tempDir();
    const [alice, bob] = await Promise.all([registered(dir, 'Alice'), registered(dir, 'Bob')]);
    const question = await sendAs(alice, 'Alice', { to: ['Bob'], content: 'ping?' });
    const started = Date.now();
    const waiting = receiveAs(alice, 'Alice', { reply_to: question, wait_seconds: 60 });
    await new Promise((r) => setTimeout(r, 300));
    const reply = await sendAs(bob, 'Bob', { to: ['Alice'], reply_to: question, content: 'pong' });
    const answered = await waiting;
    expect(answered.messages.map((m) => m.seq)).toEqual([reply]);
    // Woken by the reply, not by the end of the wait.
    expect(Date.now() - started).toBeLessThan(30_000);
    // Not acknowledged yet: a plain receive delivers it again under the same token, flagged.
    const again = await receiveAs(alice, 'Alice');
    expect(again).toMatchObject({ redelivered: true, batch_token: answered.batch_token });
    expect(again.messages.map((m) => m.seq)).toEqual([reply]);
    expect((await receiveAs(alice, 'Alice', { ack: again.batch_token })).messages).toEqual([]);
  });
});

describe('message_status', () => {
  it('shows the sender each addressee going from unread to delivered to acknowledged, and nobody else\'s mail', async () => {
    const dir = tempDir();
    const [alice, bob, carol] = await Promise.all([registered(dir, 'Alice'), registered(dir, 'Bob'), registered(dir, 'Carol')]);
    const seq = await sendAs(alice, 'Alice', { to: ['Carol', 'Bob'], content: 'review my branch' });
    const status = async () => toolAnswer(MessageStatusOutput, await alice.call('message_status', { as: 'Alice', seq }), 'message_status');

    expect(await status()).toEqual({
      seq,
      to: [
        { name: 'Carol', state: 'unread', delivered_at: null, acknowledged_at: null },
        { name: 'Bob', state: 'unread', delivered_at: null, acknowledged_at: null },
      ],
    });
    const got = await receiveAs(bob, 'Bob');
    const delivered = await status();
    expect(delivered.to[0]).toMatchObject({ name: 'Carol', state: 'unread' });
    expect(delivered.to[1]).toMatchObject({ name: 'Bob', state: 'delivered', acknowledged_at: null });
    expect(Date.parse(delivered.to[1]!.delivered_at!)).not.toBeNaN();
    await receiveAs(bob, 'Bob', { ack: got.batch_token });
    const acked = await status();
    expect(acked.to[1]).toMatchObject({ name: 'Bob', state: 'acknowledged', delivered_at: delivered.to[1]!.delivered_at });
    expect(Date.parse(acked.to[1]!.acknowledged_at!)).toBeGreaterThanOrEqual(Date.parse(delivered.to[1]!.delivered_at!));
    expect(acked.to[0]).toMatchObject({ name: 'Carol', state: 'unread' });

    // Someone else's direct message, a channel message and a seq nobody has are all not_found.
    const code = async (server: McpProcess, as: string, s: number) => toolAnswer(ToolError, await server.call('message_status', { as, seq: s }), 'message_status').error.code;
    expect(await code(carol, 'Carol', seq)).toBe('not_found');
    const channel = await sendAs(alice, 'Alice', { channel: 'general', content: 'hello all' });
    expect(await code(alice, 'Alice', channel)).toBe('not_found');
    expect(await code(alice, 'Alice', 999_999)).toBe('not_found');
    expect(toolAnswer(ToolError, await alice.call('message_status', { as: 'Alice', seq: 0 }), 'message_status').error.code).toBe('validation');
  });
});
