import { describe, expect, it } from 'vitest';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { history } from '../../src/bus/history.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import type { Config } from '../../src/config.js';
import { createBus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

async function setup(overrides: Partial<Config> = {}) {
  const bus = await createBus(overrides);
  const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
  register(a, { name: 'Sam' });
  register(b, { name: 'Kim' });
  createChannel(a, { as: 'Sam', name: 'general' });
  createChannel(a, { as: 'Sam', name: 'other' });
  subscribe(b, { as: 'Kim', channel: 'general' });
  const seqs: number[] = [];
  for (let i = 1; i <= 6; i++) {
    seqs.push((await send(i % 2 === 0 ? b : a, { as: i % 2 === 0 ? 'Kim' : 'Sam', channel: 'general', content: `m${i}` })).seq);
    await send(a, { as: 'Sam', channel: 'other', content: `o${i}` });
  }
  return { bus, a, b, seqs };
}

const contents = (r: { messages: { content: string }[] }) => r.messages.map((m) => m.content);

describe('history', () => {
  it('pages oldest first: newest page by default, before reads back, after reads forward', async () => {
    const { b, seqs } = await setup();
    const latest = history(b, { as: 'Kim', channel: 'general', count: 2 });
    expect(contents(latest)).toEqual(['m5', 'm6']);
    expect(latest.has_more).toBe(true);
    expect(contents(history(b, { as: 'Kim', channel: 'general', count: 2, before: seqs[4]! }))).toEqual(['m3', 'm4']);
    const start = history(b, { as: 'Kim', channel: 'general', before: seqs[1]! });
    expect(contents(start)).toEqual(['m1']);
    expect(start.has_more).toBe(false);
    expect(contents(history(b, { as: 'Kim', channel: 'general', count: 3, after: seqs[0]! }))).toEqual(['m2', 'm3', 'm4']);
    expect(contents(history(b, { as: 'Kim', channel: 'general', after: 0 }))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });

  it('leaves cursors untouched and includes own messages', async () => {
    const { b } = await setup();
    const before = b.db.all('SELECT * FROM subscriptions');
    expect(contents(history(b, { as: 'Kim', channel: 'general' }))).toContain('m2');
    expect(b.db.all('SELECT * FROM subscriptions')).toEqual(before);
    // Receive still starts where the subscription was: Sam's messages since Kim subscribed.
    expect(contents(await receive(b, { as: 'Kim' }))).toEqual(['m1', 'm3', 'm5']);
  });

  it('excludes tombstoned revisions', async () => {
    const { b, seqs } = await setup();
    b.db.run('UPDATE messages SET tombstone = 1, tombstone_at = 1 WHERE seq = ?', [seqs[5]!]);
    expect(contents(history(b, { as: 'Kim', channel: 'general', count: 1 }))).toEqual(['m5']);
  });

  it('fits the result ceiling with whole records, dropping those farthest from the anchor', async () => {
    const { a, b } = await setup({ result_default_kib: 1 });
    for (const c of ['x', 'y', 'z']) await send(a, { as: 'Sam', channel: 'general', content: c.repeat(300) });
    const back = history(b, { as: 'Kim', channel: 'general' });
    expect(back.messages.map((m) => m.content[0])).toEqual(['y', 'z']);
    expect(back.has_more).toBe(true);
  });

  it('validates its input and needs an existing channel', async () => {
    const { b } = await setup({ receive_max_count: 5 });
    expect((await expectError(() => history(b, { as: 'Kim', channel: 'general', before: 3, after: 1 }), BusError)).field).toBe('before');
    expect((await expectError(() => history(b, { as: 'Kim', channel: 'general', count: 6 }), BusError)).field).toBe('count');
    expect((await expectError(() => history(b, { as: 'Kim', channel: 'general', before: 0 }), BusError)).field).toBe('before');
    expect((await expectError(() => history(b, { as: 'Kim', channel: 'nope' }), BusError)).code).toBe('not_found');
  });
});
