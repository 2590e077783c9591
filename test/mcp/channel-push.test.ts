/**
 * Claude Code channel events from real `agentbus mcp` processes over stdio:
 * what leaves the server, when, and when not. (How Claude Code renders them
 * needs a claude.ai login that tests cannot have; this is the server side.)
 */
import type { Notification } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { resetDatabase } from '../../src/maintenance/reset.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

interface Listener {
  /** Every notification, channel event or not. */
  readonly events: Notification[];
}

/** Collects every notification the client did not expect (the channel events). */
function listen(p: McpProcess): Listener {
  const events: Notification[] = [];
  p.client.fallbackNotificationHandler = async (notification) => {
    events.push(notification);
  };
  return { events };
}

const ChannelEvent = v.object({
  method: v.string(),
  params: v.object({ content: v.string(), meta: v.record(v.string(), v.string()) }),
});

/** A notification read as a channel event; fails the test when it does not have that shape. */
function channelEvent(notification: Notification | undefined): v.InferInput<typeof ChannelEvent> {
  if (v.is(ChannelEvent, notification)) return notification;
  throw new Error(`not a channel event: ${JSON.stringify(notification)}`);
}

/** A round trip through `p`: the server looks at its inbox before answering any tool call, so events due are out before this returns. */
async function settle(p: McpProcess, as: string): Promise<void> {
  await p.call('list_channels', { as });
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function pair(config: Record<string, unknown> = {}): Promise<{ dir: string; a: McpProcess; b: McpProcess; heard: Listener }> {
  const dir = tempDir();
  const settings = { send_messages_per_second: 10_000, ...config };
  const a = await startMcp(dir, { config: settings });
  const b = await startMcp(dir, { config: settings });
  const heard = listen(b);
  await a.call('register', { name: 'Ann' });
  await b.call('register', { name: 'Kim' });
  await b.call('subscribe', { as: 'Kim', channel: 'general' });
  return { dir, a, b, heard };
}

describe('channel push', () => {
  it('declares claude/channel and explains <channel> events in the instructions; push: false declares and sends nothing', async () => {
    const { a, b, heard } = await pair();
    expect(b.client.getServerCapabilities()?.experimental).toEqual({ 'claude/channel': {} });
    expect(b.client.getInstructions()).toMatch(/<channel source="agentbus">/);
    expect(b.client.getInstructions()).toMatch(/untrusted/);

    const off = await pair({ push: false });
    expect(off.b.client.getServerCapabilities()?.experimental).toBeUndefined();
    expect(off.b.client.getInstructions()).not.toMatch(/<channel/);
    await off.a.call('send', { as: 'Ann', channel: 'general', content: 'nobody is told' });
    await settle(off.b, 'Kim');
    expect(off.heard.events).toEqual([]);
    // The inbox file (what hooks read) is kept either way: push is only the channel event.
    expect(toolAnswer(ReceiveOutput, await off.b.call('receive', { as: 'Kim' }), 'receive').messages).toHaveLength(1);
    await a.call('send', { as: 'Ann', channel: 'general', content: 'x' });
    await until(() => heard.events.length === 1, 'the event with push on');
  });

  it("sends notifications/claude/channel in the documented shape: who wrote where, a bounded preview, the call; meta as strings", async () => {
    const { a, b, heard } = await pair();
    const long = `Please review the retry logic in src/net.ts ${'and more '.repeat(100)}`;
    const { seq } = toolAnswer(SendOutput, await a.call('send', { as: 'Ann', channel: 'general', content: long }), 'send');
    await settle(b, 'Kim');
    expect(heard.events).toHaveLength(1);
    const event = channelEvent(heard.events[0]);
    expect(event.method).toBe('notifications/claude/channel');
    expect(Object.keys(event.params).sort()).toEqual(['content', 'meta']);
    expect(event.params.meta).toEqual({ as: 'Kim', channel: 'general', sender: 'Ann', seq: String(seq), count: '1' });
    for (const [key, value] of Object.entries(event.params.meta)) {
      expect(key).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
      expect(typeof value).toBe('string');
    }
    const content = event.params.content;
    expect(content).toContain('Ann');
    expect(content).toContain('"general"');
    expect(content).toContain('Please review the retry logic');
    expect(content).toMatch(/receive with as: "Kim"/);
    expect(content.length).toBeLessThan(400);
  });

  it('never pushes own messages, nor what was unread before the server saw the subscription', async () => {
    const dir = tempDir();
    const a = await startMcp(dir);
    await a.call('register', { name: 'Ann' });
    await a.call('send', { as: 'Ann', channel: 'general', content: 'before Kim subscribed' });
    const b = await startMcp(dir);
    const heard = listen(b);
    await b.call('register', { name: 'Kim' });
    await b.call('subscribe', { as: 'Kim', channel: 'general', from: 'oldest' });
    await b.call('send', { as: 'Kim', channel: 'general', content: 'my own words' });
    await settle(b, 'Kim');
    expect(heard.events).toEqual([]);
    // The backlog is still there to receive (register and subscribe report it).
    const got = toolAnswer(ReceiveOutput, await b.call('receive', { as: 'Kim' }), 'receive');
    expect(got.messages.map((m) => m.content)).toEqual(['before Kim subscribed']);
  });

  it('coalesces a burst: at most one event per subscription per interval, the last one counting everything unread', async () => {
    const { a, b, heard } = await pair();
    const started = Date.now();
    let last = 0;
    for (let i = 0; i < 40; i++) last = toolAnswer(SendOutput, await a.call('send', { as: 'Ann', channel: 'general', content: `burst ${i}` }), 'send').seq;
    const burstMs = Date.now() - started;
    await until(() => heard.events.length > 0 && channelEvent(heard.events.at(-1)).params.meta.seq === String(last), 'an event naming the last message');
    // The leading event, then at most one per 2 s interval of the burst, then the trailing one.
    expect(heard.events.length).toBeLessThanOrEqual(2 + Math.ceil(burstMs / 2000));
    expect(channelEvent(heard.events.at(-1)).params.meta.count).toBe('40');
    await settle(b, 'Kim');
    await new Promise((r) => setTimeout(r, 2500));
    await settle(b, 'Kim');
    expect(channelEvent(heard.events.at(-1)).params.meta.seq).toBe(String(last));
  });

  it('pushes nothing to a name inside a receive: the receive gets the message', async () => {
    const { a, b, heard } = await pair();
    const waiting = b.call('receive', { as: 'Kim', wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 300));
    await a.call('send', { as: 'Ann', channel: 'general', content: 'straight into the receive' });
    const got = toolAnswer(ReceiveOutput, await waiting, 'receive');
    expect(got.messages.map((m) => m.content)).toEqual(['straight into the receive']);
    await settle(b, 'Kim');
    expect(heard.events).toEqual([]);
  });

  it('stops pushing to a name once it is no longer held, even when another process then holds it', async () => {
    const { dir, a, b, heard } = await pair();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'first' });
    await until(() => heard.events.length === 1, 'the first event');
    const c = await startMcp(dir);
    // B stalls (stopped, so its heartbeat does not move) and Kim's heartbeat ages far past the
    // expiry: B still runs in this pid namespace, so it keeps the name, and C gets another one.
    process.kill(b.transport.pid!, 'SIGSTOP');
    try {
      const { db } = await openTestDatabase(dir);
      db.transaction(() => db.run("UPDATE sessions SET heartbeat = heartbeat - 60000, heartbeat_mono = heartbeat_mono - 60000 WHERE sender = 'Kim'"));
      db.close();
      expect((await c.call('register', { name: 'Kim' })).display_name).not.toBe('Kim');
    } finally {
      process.kill(b.transport.pid!, 'SIGCONT');
    }
    // The name ends while B runs: an operator's reset removes every session (what
    // `agentbus reset` does). C then takes Kim and subscribes, and a message arrives for Kim.
    const { db } = await openTestDatabase(dir);
    expect(resetDatabase(db).deleted.sessions).toBeGreaterThanOrEqual(3);
    db.close();
    expect((await c.call('register', { name: 'Kim' })).display_name).toBe('Kim');
    await c.call('subscribe', { as: 'Kim', channel: 'general' });
    await a.call('register', { name: 'Ann' });
    await a.call('send', { as: 'Ann', channel: 'general', content: 'second' });
    expect(toolAnswer(ReceiveOutput, await c.call('receive', { as: 'Kim' }), 'receive').messages.map((m) => m.content)).toEqual(['second']);
    // B learns it no longer holds the name on its next call; neither then nor after the push interval does it push.
    expect(toolAnswer(ToolError, await b.call('list_channels', { as: 'Kim' }), 'list_channels').error.code).toBe('not_registered');
    await new Promise((r) => setTimeout(r, 2500));
    await b.call('list_channels', { as: 'Kim' });
    expect(heard.events).toHaveLength(1);
  });
});
