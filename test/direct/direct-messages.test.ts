/**
 * Direct messages over real `agentbus mcp` processes: addressed by display
 * name, durable for an offline name, redelivered after a crash, never seen by
 * anyone else, refused for a name nobody ever had.
 */
import { describe, expect, it } from 'vitest';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { killMcp, startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { toolAnswer, ToolError } from '../support/tool-answer.js';

async function rows(dir: string, sql: string): Promise<unknown[]> {
  const { db } = await openTestDatabase(dir);
  try {
    return db.all(sql);
  } finally {
    db.close();
  }
}

async function registered(dir: string, name: string): Promise<McpProcess> {
  const server = await startMcp(dir);
  expect((await server.call('register', { name })).display_name).toBe(name);
  return server;
}

async function receiveAs(server: McpProcess, as: string, args: Record<string, unknown> = {}) {
  return toolAnswer(ReceiveOutput, await server.call('receive', { as, ...args }), 'receive');
}

function errorCode(answer: unknown): string {
  return toolAnswer(ToolError, answer, 'tool').error.code;
}

describe('a direct message', () => {
  it('to a name that is offline waits for it: a new process that registers the name gets it once', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    const bob = await registered(dir, 'Bob');
    await bob.close();

    const sent = toolAnswer(SendOutput, await alice.call('send', { as: 'Alice', to: ['Bob'], content: 'run the tests on your branch' }), 'send');
    expect(sent.to).toEqual(['Bob']);

    const later = await startMcp(dir);
    // Register says mail is waiting.
    expect(await later.call('register', { name: 'Bob' })).toEqual({ display_name: 'Bob', resumed: false, subscriptions: [], direct_pending: 1 });
    const got = await receiveAs(later, 'Bob');
    expect(got.messages).toMatchObject([{ seq: sent.seq, sender: 'Alice', direct: true, to: ['Bob'], content: 'run the tests on your branch' }]);
    expect(got.redelivered).toBe(false);
    const after = await receiveAs(later, 'Bob', { ack: got.batch_token });
    expect(after.messages).toEqual([]);
    expect(after.notices).toEqual([]);
  });

  it('delivered but not acknowledged when the addressee is SIGKILLed is delivered again to the resumed name, then acknowledged once', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    const bob = await registered(dir, 'Bob');
    await bob.call('subscribe', { as: 'Bob', channel: 'general' });
    const channel = toolAnswer(SendOutput, await alice.call('send', { as: 'Alice', channel: 'general', content: 'for everyone' }), 'send');
    const direct = toolAnswer(SendOutput, await alice.call('send', { as: 'Alice', to: ['Bob'], content: 'for Bob' }), 'send');
    const first = await receiveAs(bob, 'Bob');
    // Merged by seq with the channel message, under one token.
    expect(first.messages.map((m) => m.seq)).toEqual([channel.seq, direct.seq]);
    await killMcp(bob, 'SIGKILL');

    const resumed = await registered(dir, 'Bob');
    const again = await receiveAs(resumed, 'Bob');
    expect(again.redelivered).toBe(true);
    expect(again.batch_token).toBe(first.batch_token);
    expect(again.messages.map((m) => [m.seq, m.direct ?? false])).toEqual([
      [channel.seq, false],
      [direct.seq, true],
    ]);
    const done = await receiveAs(resumed, 'Bob', { ack: again.batch_token });
    expect(done.messages).toEqual([]);
    expect(done.notices).toEqual([]);
    expect(await rows(dir, 'SELECT addressee, state FROM direct_recipients')).toEqual([{ addressee: 'Bob', state: 'acknowledged' }]);
  });

  it('to three addressees reaches each exactly once, and never an agent subscribed to every channel', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    const addressees = await Promise.all(['Bob', 'Carol', 'Sam/task'].map(async (name) => {
      const server = await startMcp(dir);
      const args = name === 'Sam/task' ? { name: 'task', parent: 'Sam' } : { name };
      expect((await server.call('register', args)).display_name).toBe(name);
      return { name, server };
    }));
    const eve = await registered(dir, 'Eve');
    await alice.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    for (const channel of ['general', 'memory', 'work']) await eve.call('subscribe', { as: 'Eve', channel });
    // Sam itself, the parent, is not an addressee of mail to its child.
    const sam = await registered(dir, 'Sam');

    const sent = toolAnswer(SendOutput, await alice.call('send', { as: 'Alice', to: ['Carol', 'Bob', 'Sam/task'], content: 'stand-up in 5' }), 'send');
    for (const { name, server } of addressees) {
      const got = await receiveAs(server, name, { wait_seconds: 5 });
      expect(got.messages).toMatchObject([{ seq: sent.seq, direct: true, to: ['Carol', 'Bob', 'Sam/task'] }]);
      const next = await receiveAs(server, name, { ack: got.batch_token });
      expect(next.messages).toEqual([]);
    }
    expect((await receiveAs(eve, 'Eve', { include_own: true })).messages).toEqual([]);
    expect((await receiveAs(sam, 'Sam')).messages).toEqual([]);
    // Search and the channel list do not show it to Eve either; the sender and an addressee find it.
    const searchAs = async (server: McpProcess, as: string) => ((await server.call('search', { as, query: 'stand-up' })).results as { seq: number }[]).map((r) => r.seq);
    expect(await searchAs(eve, 'Eve')).toEqual([]);
    expect(await searchAs(alice, 'Alice')).toEqual([sent.seq]);
    expect(await searchAs(addressees[0]!.server, 'Bob')).toEqual([sent.seq]);
    // history of direct messages: the sender's and each addressee's, and nobody else's.
    const historyAs = async (server: McpProcess, args: Record<string, unknown>) =>
      ((await server.call('history', { direct: true, ...args })).messages as { seq: number }[]).map((m) => m.seq);
    expect(await historyAs(eve, { as: 'Eve' })).toEqual([]);
    expect(await historyAs(alice, { as: 'Alice' })).toEqual([sent.seq]);
    expect(await historyAs(addressees[0]!.server, { as: 'Bob', with: 'Alice' })).toEqual([sent.seq]);
    expect(await historyAs(addressees[0]!.server, { as: 'Bob', with: 'Carol' })).toEqual([]);
    expect(await historyAs(eve, { as: 'Eve', with: 'Alice' })).toEqual([]);
    for (const bad of [{ as: 'Eve' }, { as: 'Eve', channel: 'general', direct: true }, { as: 'Eve', channel: 'general', with: 'Alice' }]) {
      expect(errorCode(await eve.call('history', bad)), JSON.stringify(bad)).toBe('validation');
    }
    const listed = (await eve.call('list_channels', { as: 'Eve' })).channels as { name: string }[];
    expect(listed.map((c) => c.name)).toEqual(['general', 'memory', 'work']);
  });

  it('to a name never registered on this bus is refused with not_found, and nothing is stored', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    await registered(dir, 'Bob');
    const before = await rows(dir, 'SELECT count(*) AS n FROM messages');
    expect(errorCode(await alice.call('send', { as: 'Alice', to: ['Bbo'], content: 'typo' }))).toBe('not_found');
    expect(errorCode(await alice.call('send', { as: 'Alice', to: ['Bob', 'Nobody'], content: 'one typo' }))).toBe('not_found');
    expect(await rows(dir, 'SELECT count(*) AS n FROM messages')).toEqual(before);
    expect(await rows(dir, 'SELECT count(*) AS n FROM direct_recipients')).toEqual([{ n: 0 }]);
  });

  it('with bad input is a validation error and changes nothing', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    await registered(dir, 'Bob');
    const names = Array.from({ length: 17 }, (_, i) => `N${i}`);
    const bad: Record<string, unknown>[] = [
      { to: [] },
      { to: ['Bob', 'Bob'] },
      { to: names },
      { to: [''] },
      { to: ['Bob//x'] },
      { to: ['Bo\u0007b'] },
      { to: 'Bob' },
      { to: ['Alice'] },
      { to: ['Bob'], channel: 'memory' },
      { to: ['Bob'], channel: 'general' },
      {},
    ];
    for (const fields of bad) {
      expect(errorCode(await alice.call('send', { as: 'Alice', content: 'x', ...fields })), JSON.stringify(fields)).toBe('validation');
    }
    expect(errorCode(await alice.call('receive', { as: 'Alice', reply_to: 1_000_000 }))).toBe('validation');
    expect(await rows(dir, 'SELECT count(*) AS n FROM messages')).toEqual([{ n: 0 }]);
    expect(await rows(dir, 'SELECT count(*) AS n FROM direct_recipients')).toEqual([{ n: 0 }]);
  });

  it('keeps the channel path working for a name with no subscriptions: a waiting receive wakes for a direct message', async () => {
    const dir = tempDir();
    const alice = await registered(dir, 'Alice');
    const bob = await registered(dir, 'Bob');
    const waiting = receiveAs(bob, 'Bob', { wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 300));
    const sent = toolAnswer(SendOutput, await alice.call('send', { as: 'Alice', to: ['Bob'], content: 'wake up' }), 'send');
    const got = await waiting;
    expect(got.messages.map((m) => m.seq)).toEqual([sent.seq]);
  });
});
