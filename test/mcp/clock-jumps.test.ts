/**
 * Real `agentbus mcp` processes whose wall clock is set by hand: the
 * shift-clock fixture, loaded with --import, shifts Date.now in that process
 * only (and jumps it on SIGUSR2), as NTP or a user setting the date would;
 * the monotonic clock runs on untouched.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Notification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { SendOutput } from '../../src/bus/send.js';
import { fixturePath } from '../support/child-process.js';
import { jsonAt } from '../support/json-at.js';
import { killMcp, startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';

const HOUR = 3_600_000;

/** Starts a server whose wall clock reads `offsetMs` off and moves by `jumpMs` at each jumpClock. */
function startShifted(dir: string, offsetMs: number, jumpMs = 0): Promise<McpProcess> {
  return startMcp(dir, {
    env: {
      NODE_OPTIONS: `--import ${new URL(`file://${fixturePath('shift-clock.js')}`).href}`,
      AGENTBUS_TEST_CLOCK_OFFSET_MS: String(offsetMs),
      AGENTBUS_TEST_CLOCK_JUMP_MS: String(jumpMs),
    },
  });
}

/** Jumps the server's wall clock and waits until the server says the jump is in effect. */
async function jumpClock(server: McpProcess): Promise<void> {
  const before = server.stderr().split('clock jumped').length;
  process.kill(server.transport.pid!, 'SIGUSR2');
  while (server.stderr().split('clock jumped').length === before) await sleep(5);
}

describe('wall-clock jumps, real processes', () => {
  it('a receive waiting 3 s returns after 3 s although the clock is set back 2 h while it waits', async () => {
    const dir = tempDir();
    const a = await startShifted(dir, 0, -2 * HOUR);
    await a.call('register', { name: 'Ann' });
    await a.call('subscribe', { as: 'Ann', channel: 'general' });
    const waiting = a.client.callTool({ name: 'receive', arguments: { as: 'Ann', wait_seconds: 3 } }, undefined, { timeout: 30_000 });
    await sleep(500);
    await jumpClock(a);
    // A wait measured on the wall clock would still be waiting two hours from now; the request timeout ends this test then.
    const result = await waiting;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ messages: [], batch_token: null, redelivered: false, notices: [] });
  });

  it("a dead agent's name is free at once for a process whose clock was set back 2 h after the agent's last beat", async () => {
    const dir = tempDir();
    const ann = await startMcp(dir);
    await ann.call('register', { name: 'Ann' });
    await ann.call('subscribe', { as: 'Ann', channel: 'general' });
    await killMcp(ann, 'SIGKILL');
    // By the wall clock the dead agent's last beat lies 2 h in the future: a heartbeat compared with the wall clock stays "fresh" for 2 h.
    const behind = await startShifted(dir, -2 * HOUR);
    expect(await behind.call('register', { name: 'Ann', resume: true })).toEqual({
      display_name: 'Ann',
      resumed: true,
      subscriptions: [{ channel: 'general', pending: 0 }],
    });
  });

  it('a process whose clock is 2 h ahead does not take the name of a live process', async () => {
    const dir = tempDir();
    const ann = await startMcp(dir);
    expect((await ann.call('register', { name: 'Ann' })).display_name).toBe('Ann');
    const ahead = await startShifted(dir, 2 * HOUR);
    expect((await ahead.call('register', { name: 'Ann' })).display_name).toBe('Ann2');
    expect(await ann.call('send', { as: 'Ann', channel: 'general', content: 'still Ann' })).toEqual({ seq: expect.any(Number) });
  });

  it('a retry with the same idempotency key after the clock jumps 2 h forward returns the original seq', async () => {
    const dir = tempDir();
    const a = await startShifted(dir, 0, 2 * HOUR);
    await a.call('register', { name: 'Ann' });
    const input = { as: 'Ann', channel: 'general', content: 'exactly once', idempotency_key: 'k-1' };
    const first = toolAnswer(SendOutput, await a.call('send', input), 'send');
    await jumpClock(a);
    expect(await a.call('send', input)).toEqual(first);
    const { db } = await openTestDatabase(dir);
    expect(db.all("SELECT seq FROM messages WHERE content = 'exactly once'")).toEqual([{ seq: first.seq }]);
    db.close();
  });

  it('a channel event comes one push interval after the last although the clock was set back 2 h between them', async () => {
    const dir = tempDir();
    const a = await startMcp(dir);
    const b = await startShifted(dir, 0, -2 * HOUR);
    const events: Notification[] = [];
    b.client.fallbackNotificationHandler = async (notification) => {
      events.push(notification);
    };
    await a.call('register', { name: 'Ann' });
    await b.call('register', { name: 'Kim' });
    await b.call('subscribe', { as: 'Kim', channel: 'general' });
    const heard = async (count: number): Promise<void> => {
      // Far beyond the 2 s push interval, far short of 2 h: an interval measured on the wall clock ends this wait.
      for (const deadline = performance.now() + 20_000; events.length < count; await sleep(20)) {
        if (performance.now() > deadline) throw new Error(`${events.length} channel event(s), waiting for ${count}`);
      }
    };
    await a.call('send', { as: 'Ann', channel: 'general', content: 'first' });
    await heard(1);
    await jumpClock(b);
    const { seq } = toolAnswer(SendOutput, await a.call('send', { as: 'Ann', channel: 'general', content: 'second' }), 'send');
    await heard(2);
    expect(jsonAt(events[1], 'params', 'meta')).toMatchObject({ as: 'Kim', channel: 'general', seq: String(seq), count: '2' });
  });
});
