import { describe, expect, it } from 'vitest';
import { createChannel, listChannels, subscribe, unsubscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import { createBus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

async function twoAgents() {
  const bus = await createBus();
  const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
  register(a, { name: 'Sam' });
  register(b, { name: 'Kim' });
  return { bus, a, b };
}

describe('create_channel', () => {
  it('creates once, is idempotent on the same kind, conflicts on the other kind', async () => {
    const { a, b } = await twoAgents();
    expect(createChannel(a, { as: 'Sam', name: 'lobby' })).toEqual({ name: 'lobby', kind: 'ordinary', created: true });
    expect(createChannel(b, { as: 'Kim', name: 'lobby', kind: 'ordinary' })).toEqual({ name: 'lobby', kind: 'ordinary', created: false });
    const error = await expectError(() => createChannel(b, { as: 'Kim', name: 'lobby', kind: 'memory' }), BusError);
    expect([error.code, error.field]).toEqual(['conflict', 'name']);
    expect(createChannel(a, { as: 'Sam', name: 'notes', kind: 'memory' }).created).toBe(true);
  });

  it('rejects bad channel names and kinds, naming the field, and creates nothing', async () => {
    const { a } = await twoAgents();
    for (const channel of ['', '-x', 'a b', 'a/b', 'x'.repeat(129), 'ünï']) {
      expect((await expectError(() => createChannel(a, { as: 'Sam', name: channel }), BusError)).field).toBe('name');
    }
    expect((await expectError(() => createChannel(a, { as: 'Sam', name: 'ok', kind: 'queue' }), BusError)).field).toBe('kind');
    expect((await expectError(() => createChannel(a, { name: 'ok' }), BusError)).field).toBe('as');
    // `channel` is the field of every other operation; create_channel takes `name`, as in the design.
    const misnamed = await expectError(() => createChannel(a, { as: 'Sam', channel: 'ok' }), BusError);
    expect([misnamed.code, misnamed.field]).toEqual(['validation', 'name']);
    expect(a.db.get('SELECT count(*) AS n FROM channels')).toEqual({ n: 3 }); // only the two default channels and the reserved '@direct'
  });
});

describe('list_channels', () => {
  it('lists kind, message count, latest seq and subscription', async () => {
    const { a, b } = await twoAgents();
    createChannel(a, { as: 'Sam', name: 'lobby' });
    createChannel(a, { as: 'Sam', name: 'notes', kind: 'memory' });
    createChannel(a, { as: 'Sam', name: 'empty' });
    subscribe(b, { as: 'Kim', channel: 'lobby' });
    await send(a, { as: 'Sam', channel: 'lobby', content: 'one' });
    const { seq } = await send(a, { as: 'Sam', channel: 'lobby', content: 'two' });
    const mem = await send(a, { as: 'Sam', channel: 'notes', content: 'fact' });
    expect(listChannels(b, { as: 'Kim' })).toEqual({
      channels: [
        { name: 'empty', kind: 'ordinary', message_count: 0, latest_seq: null, subscribed: false },
        { name: 'general', kind: 'ordinary', message_count: 0, latest_seq: null, subscribed: false },
        { name: 'lobby', kind: 'ordinary', message_count: 2, latest_seq: seq, subscribed: true },
        { name: 'memory', kind: 'memory', message_count: 0, latest_seq: null, subscribed: false },
        { name: 'notes', kind: 'memory', message_count: 1, latest_seq: mem.seq, subscribed: false },
      ],
    });
  });
});

describe('subscribe and unsubscribe', () => {
  it('from now skips earlier messages; from oldest delivers them', async () => {
    const { bus, a, b } = await twoAgents();
    createChannel(a, { as: 'Sam', name: 'lobby' });
    await send(a, { as: 'Sam', channel: 'lobby', content: 'before' });
    subscribe(b, { as: 'Kim', channel: 'lobby' });
    expect((await receive(b, { as: 'Kim' })).messages).toEqual([]);
    const c = await bus.process('C');
    register(c, { name: 'Lee' });
    expect(subscribe(c, { as: 'Lee', channel: 'lobby', from: 'oldest' }).created).toBe(true);
    expect((await receive(c, { as: 'Lee' })).messages.map((m) => m.content)).toEqual(['before']);
  });

  it('keeps an existing cursor when subscribing again', async () => {
    const { a, b } = await twoAgents();
    createChannel(a, { as: 'Sam', name: 'lobby' });
    subscribe(b, { as: 'Kim', channel: 'lobby' });
    await send(a, { as: 'Sam', channel: 'lobby', content: 'kept' });
    expect(subscribe(b, { as: 'Kim', channel: 'lobby', from: 'now' }).created).toBe(false);
    expect((await receive(b, { as: 'Kim' })).messages.map((m) => m.content)).toEqual(['kept']);
  });

  it('a missing channel is not_found for subscribe, unsubscribe and send (no auto-create)', async () => {
    const { a } = await twoAgents();
    for (const op of [
      () => subscribe(a, { as: 'Sam', channel: 'nope' }),
      () => unsubscribe(a, { as: 'Sam', channel: 'nope' }),
      () => send(a, { as: 'Sam', channel: 'nope', content: 'x' }),
    ]) {
      const error = await expectError(op, BusError);
      expect(error.code).toBe('not_found');
      expect(error.field).toBe('channel');
    }
    expect(a.db.get('SELECT count(*) AS n FROM channels')).toEqual({ n: 3 }); // only the two default channels and the reserved '@direct'
  });

  it('unsubscribe drops the cursor and the pending batch', async () => {
    const { a, b } = await twoAgents();
    createChannel(a, { as: 'Sam', name: 'lobby' });
    subscribe(b, { as: 'Kim', channel: 'lobby' });
    await send(a, { as: 'Sam', channel: 'lobby', content: 'one' });
    const first = await receive(b, { as: 'Kim' });
    expect(first.batch_token).not.toBeNull();
    expect(unsubscribe(b, { as: 'Kim', channel: 'lobby' })).toEqual({ channel: 'lobby', removed: true });
    expect(unsubscribe(b, { as: 'Kim', channel: 'lobby' })).toEqual({ channel: 'lobby', removed: false });
    expect(b.db.get("SELECT count(*) AS n FROM subscriptions WHERE sender = 'Kim'")).toEqual({ n: 0 });
    subscribe(b, { as: 'Kim', channel: 'lobby' });
    expect((await receive(b, { as: 'Kim' })).messages).toEqual([]);
  });
});
