import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChangeWaiter, ringBell } from '../../src/bus/change-waiter.js';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import { systemClock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { deleteIdleSubscriptions } from '../../src/maintenance/stale-rows.js';
import { createBus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

async function setup(overrides: Partial<Config> = {}) {
  const bus = await createBus(overrides);
  const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
  register(a, { name: 'Sam' });
  register(b, { name: 'Kim' });
  for (const channel of ['general', 'builds']) {
    createChannel(a, { as: 'Sam', name: channel });
    subscribe(b, { as: 'Kim', channel });
  }
  return { bus, a, b };
}

const say = async (ctx: BusContext, channel: string, content: string) => (await send(ctx, { as: 'Sam', channel, content })).seq;
const contents = (r: { messages: { content: string }[] }) => r.messages.map((m) => m.content);
const pendingTokens = (ctx: BusContext) => ctx.db.all("SELECT channel, pending_token FROM subscriptions WHERE sender = 'Kim' AND pending_token IS NOT NULL");

describe('receive and acknowledge', () => {
  it('redelivers until acknowledged, flagged, with an instruction naming the token', async () => {
    const { a, b } = await setup();
    await say(a, 'general', 'one');
    await say(a, 'general', 'two');
    const first = await receive(b, { as: 'Kim' });
    expect(contents(first)).toEqual(['one', 'two']);
    expect(first.redelivered).toBe(false);
    expect(first.batch_token).toEqual(expect.any(String));

    await say(a, 'general', 'three');
    for (let i = 0; i < 2; i++) {
      const again = await receive(b, { as: 'Kim' });
      expect(contents(again)).toEqual(['one', 'two']);
      expect(again.redelivered).toBe(true);
      expect(again.batch_token).toBe(first.batch_token);
      expect(again.instruction).toContain(first.batch_token);
    }
    const next = await receive(b, { as: 'Kim', ack: first.batch_token! });
    expect(contents(next)).toEqual(['three']);
    expect(next.redelivered).toBe(false);
    expect(next.notices).toEqual([]);

    // A stale token acknowledges nothing and says so; the pending batch comes back.
    const stale = await receive(b, { as: 'Kim', ack: first.batch_token! });
    expect(stale.notices.map((n) => n.kind)).toEqual(['ack_ignored']);
    expect(contents(stale)).toEqual(['three']);
    expect(stale.redelivered).toBe(true);

    const done = await receive(b, { as: 'Kim', ack: next.batch_token! });
    expect(done).toEqual({ messages: [], batch_token: null, redelivered: false, notices: [] });
  });

  it('merges channels by seq and acknowledges every channel of the batch with one token', async () => {
    const { a, b } = await setup();
    await say(a, 'general', 'g1');
    await say(a, 'builds', 'b1');
    await say(a, 'general', 'g2');
    await say(a, 'builds', 'b2');
    const batch = await receive(b, { as: 'Kim' });
    expect(contents(batch)).toEqual(['g1', 'b1', 'g2', 'b2']);
    expect(batch.messages.map((m) => m.seq)).toEqual([...batch.messages.map((m) => m.seq)].sort((x, y) => x - y));
    expect(pendingTokens(b)).toHaveLength(2);
    expect((await receive(b, { as: 'Kim', ack: batch.batch_token! })).messages).toEqual([]);
    expect(pendingTokens(b)).toHaveLength(0);
  });

  it('filters by channels and refuses a channel the sender is not subscribed to', async () => {
    const { a, b } = await setup();
    createChannel(a, { as: 'Sam', name: 'other' });
    await say(a, 'general', 'g1');
    await say(a, 'builds', 'b1');
    expect(contents(await receive(b, { as: 'Kim', channels: ['builds'] }))).toEqual(['b1']);
    const error = await expectError(() => receive(b, { as: 'Kim', channels: ['other'] }), BusError);
    expect([error.code, error.field]).toEqual(['not_found', 'channels']);
  });

  it('excludes own messages unless include_own', async () => {
    const { a, b } = await setup();
    subscribe(a, { as: 'Sam', channel: 'general' });
    await say(a, 'general', 'mine');
    await send(b, { as: 'Kim', channel: 'general', content: 'theirs' });
    expect(contents(await receive(a, { as: 'Sam' }))).toEqual(['theirs']);
    const own = await receive(a, { as: 'Sam', channels: ['general'], include_own: true });
    // The pending batch is redelivered with own messages now included.
    expect(contents(own)).toEqual(['mine', 'theirs']);
  });

  it('stops at count', async () => {
    const { a, b } = await setup();
    for (let i = 1; i <= 5; i++) await say(a, 'general', `m${i}`);
    const first = await receive(b, { as: 'Kim', count: 2 });
    expect(contents(first)).toEqual(['m1', 'm2']);
    const second = await receive(b, { as: 'Kim', count: 2, ack: first.batch_token! });
    expect(contents(second)).toEqual(['m3', 'm4']);
    const third = await receive(b, { as: 'Kim', ack: second.batch_token! });
    expect(contents(third)).toEqual(['m5']);
  });

  it('redelivers a shorter batch when the new count is smaller, and acknowledges only what was redelivered', async () => {
    const { a, b } = await setup();
    for (let i = 1; i <= 4; i++) await say(a, 'general', `m${i}`);
    const first = await receive(b, { as: 'Kim' });
    expect(contents(first)).toEqual(['m1', 'm2', 'm3', 'm4']);
    const short = await receive(b, { as: 'Kim', count: 1 });
    expect(contents(short)).toEqual(['m1']);
    expect(short.redelivered).toBe(true);
    expect(contents(await receive(b, { as: 'Kim', ack: short.batch_token! }))).toEqual(['m2', 'm3', 'm4']);
  });

  it('stops at the result byte ceiling with whole records, and delivers an oversized record alone', async () => {
    const { a, b } = await setup({ result_default_kib: 2, max_message_kib: 8 });
    await say(a, 'general', 'x'.repeat(700));
    await say(a, 'general', 'y'.repeat(700));
    await say(a, 'general', 'z'.repeat(700));
    await say(a, 'general', 'big'.repeat(1500));
    const first = await receive(b, { as: 'Kim' });
    expect(first.messages.map((m) => m.content[0])).toEqual(['x', 'y']);
    const second = await receive(b, { as: 'Kim', ack: first.batch_token! });
    expect(second.messages.map((m) => m.content[0])).toEqual(['z']);
    const third = await receive(b, { as: 'Kim', ack: second.batch_token! });
    expect(third.messages.map((m) => m.content.length)).toEqual([4500]);
  });

  it('skips tombstoned rows, in new batches and in redelivery', async () => {
    const { a, b } = await setup();
    const s1 = await say(a, 'general', 'kept');
    const s2 = await say(a, 'general', 'superseded');
    const s3 = await say(a, 'general', 'later');
    b.db.run('UPDATE messages SET tombstone = 1, tombstone_at = 1 WHERE seq = ?', [s2]);
    const first = await receive(b, { as: 'Kim' });
    expect(contents(first)).toEqual(['kept', 'later']);
    b.db.run('UPDATE messages SET tombstone = 1, tombstone_at = 1 WHERE seq = ?', [s1]);
    expect(contents(await receive(b, { as: 'Kim' }))).toEqual(['later']);
    b.db.run('UPDATE messages SET tombstone = 1, tombstone_at = 1 WHERE seq = ?', [s3]);
    // Nothing of the batch survives: it is complete, nothing is redelivered.
    expect(await receive(b, { as: 'Kim' })).toEqual({ messages: [], batch_token: null, redelivered: false, notices: [] });
    expect(pendingTokens(b)).toHaveLength(0);
  });

  it('validates count and wait_seconds against the configuration, naming the field', async () => {
    const { b } = await setup({ receive_max_count: 10, receive_max_wait_seconds: 5 });
    expect((await expectError(() => receive(b, { as: 'Kim', count: 11 }), BusError)).field).toBe('count');
    expect((await expectError(() => receive(b, { as: 'Kim', count: 0 }), BusError)).field).toBe('count');
    expect((await expectError(() => receive(b, { as: 'Kim', wait_seconds: 6 }), BusError)).field).toBe('wait_seconds');
    expect((await expectError(() => receive(b, { as: 'Kim', ack: '' }), BusError)).field).toBe('ack');
    expect((await expectError(() => receive(b, { as: 'Kim', channels: [] }), BusError)).field).toBe('channels');
    expect((await expectError(() => receive(b, { as: 'Kim', wait: 1 }), BusError)).field).toBe('wait');
    expect((await expectError(() => receive(b, { as: 'Sam' }), BusError)).code).toBe('not_registered');
  });

  it('tells a sender with no subscriptions to subscribe, after waiting for direct messages, which reach it anyway', async () => {
    const { a } = await setup();
    // The test clock stands still, so the wait ends by its signal, as a cancelled call would.
    const result = await receive(a, { as: 'Sam', wait_seconds: 60 }, { signal: AbortSignal.timeout(300) });
    expect(result.messages).toEqual([]);
    expect(result.instruction).toContain('subscribe');
  });
});

describe('notices', () => {
  it('reports a gap once when messages were evicted before delivery, then resumes at the oldest survivor', async () => {
    const { a, b } = await setup();
    const s1 = await say(a, 'general', 'evicted 1');
    const s2 = await say(a, 'general', 'evicted 2');
    await say(a, 'general', 'survivor');
    a.db.run('DELETE FROM messages WHERE seq IN (?, ?)', [s1, s2]);
    a.db.run("UPDATE channels SET evicted_before_seq = ? WHERE name = 'general'", [s2 + 1]);
    const result = await receive(b, { as: 'Kim' });
    // Kim subscribed from "now" before s1, so both evicted messages were missed.
    expect(result.notices).toEqual([{ kind: 'gap', channel: 'general', message: expect.stringContaining(`${s1} to ${s2}`) }]);
    expect(contents(result)).toEqual(['survivor']);
    const next = await receive(b, { as: 'Kim', ack: result.batch_token! });
    expect(next.notices).toEqual([]);
  });

  it('reports no gap to a subscriber from oldest that joined after the eviction', async () => {
    const { bus, a } = await setup();
    const s1 = await say(a, 'general', 'evicted');
    await say(a, 'general', 'survivor');
    a.db.run('DELETE FROM messages WHERE seq = ?', [s1]);
    a.db.run("UPDATE channels SET evicted_before_seq = ? WHERE name = 'general'", [s1 + 1]);
    const c = await bus.process('C');
    register(c, { name: 'Lee' });
    subscribe(c, { as: 'Lee', channel: 'general', from: 'oldest' });
    const result = await receive(c, { as: 'Lee' });
    expect(result.notices).toEqual([]);
    expect(contents(result)).toEqual(['survivor']);
  });

  it('reports the evicted part of a pending batch as a gap and redelivers the rest', async () => {
    const { a, b } = await setup();
    const s1 = await say(a, 'general', 'one');
    await say(a, 'general', 'two');
    await receive(b, { as: 'Kim' });
    a.db.run('DELETE FROM messages WHERE seq = ?', [s1]);
    a.db.run("UPDATE channels SET evicted_before_seq = ? WHERE name = 'general'", [s1 + 1]);
    const again = await receive(b, { as: 'Kim' });
    expect(again.notices.map((n) => n.kind)).toEqual(['gap']);
    expect(contents(again)).toEqual(['two']);
    expect(again.redelivered).toBe(true);
  });

  it('expires a subscription idle past cursor_idle_hours, and the others still deliver', async () => {
    const { bus, a, b } = await setup({ cursor_idle_hours: 1 });
    await say(a, 'general', 'g');
    await say(a, 'builds', 'b');
    b.db.run("UPDATE subscriptions SET last_activity = ? WHERE sender = 'Kim' AND channel = 'general'", [bus.clock.ms - 3_600_001]);
    const result = await receive(b, { as: 'Kim' });
    expect(result.notices).toEqual([{ kind: 'expired', channel: 'general', message: expect.any(String) }]);
    expect(contents(result)).toEqual(['b']);
    expect(b.db.get("SELECT count(*) AS n FROM subscriptions WHERE sender = 'Kim' AND channel = 'general'")).toEqual({ n: 0 });
    // A receive renews the idle clock of the others.
    bus.clock.advance(3_600_000);
    expect((await receive(b, { as: 'Kim', ack: result.batch_token! })).notices).toEqual([]);
  });

  it('reports, once, a subscription the maintenance tick expired while the subscriber was away', async () => {
    const { bus, a, b } = await setup({ cursor_idle_hours: 1 });
    b.db.run("UPDATE subscriptions SET last_activity = ? WHERE sender = 'Kim' AND channel = 'general'", [bus.clock.ms - 3_600_001]);
    // The tick's own step removes the idle row before Kim's next receive.
    expect(a.db.transaction(() => deleteIdleSubscriptions(a.db, bus.clock.ms, 1, 1000))).toBe(1);
    expect(b.db.get("SELECT count(*) AS n FROM subscriptions WHERE sender = 'Kim' AND channel = 'general'")).toEqual({ n: 0 });
    await say(a, 'general', 'g');
    await say(a, 'builds', 'b');

    const result = await receive(b, { as: 'Kim' });
    expect(result.notices).toEqual([{ kind: 'expired', channel: 'general', message: expect.any(String) }]);
    expect(contents(result)).toEqual(['b']);
    const next = await receive(b, { as: 'Kim', ack: result.batch_token! });
    expect(next.notices).toEqual([]);
  });

  it('a tick-expired channel named in `channels` gets the expired notice, not not_found; subscribing again clears it', async () => {
    const { bus, a, b } = await setup({ cursor_idle_hours: 1 });
    b.db.run("UPDATE subscriptions SET last_activity = ? WHERE sender = 'Kim'", [bus.clock.ms - 3_600_001]);
    a.db.transaction(() => deleteIdleSubscriptions(a.db, bus.clock.ms, 1, 1000));

    const named = await receive(b, { as: 'Kim', channels: ['general'] });
    expect(named.notices).toEqual([{ kind: 'expired', channel: 'general', message: expect.any(String) }]);
    expect(named.instruction).toEqual(expect.any(String));
    // Reported once: now it is simply a channel Kim is not subscribed to.
    expect(await expectError(() => receive(b, { as: 'Kim', channels: ['general'] }), BusError)).toMatchObject({ code: 'not_found' });

    // A new subscription answers the expiry of `builds`: no stale notice afterwards.
    subscribe(b, { as: 'Kim', channel: 'builds' });
    await say(a, 'builds', 'fresh');
    const after = await receive(b, { as: 'Kim' });
    expect(after.notices).toEqual([]);
    expect(contents(after)).toEqual(['fresh']);
  });

  it('carries the capacity notice while the notices table has it', async () => {
    const { bus, a, b } = await setup();
    a.db.run("INSERT INTO notices (kind, message, set_at) VALUES ('capacity', 'The bus is full: raise sqlite_budget_mib.', ?)", [bus.clock.ms]);
    await say(a, 'general', 'g');
    const result = await receive(b, { as: 'Kim' });
    expect(result.notices).toEqual([{ kind: 'capacity', message: 'The bus is full: raise sqlite_budget_mib.' }]);
    a.db.run('DELETE FROM notices');
    expect((await receive(b, { as: 'Kim', ack: result.batch_token! })).notices).toEqual([]);
  });
});

describe('long-poll', () => {
  it('wakes on another process commit through the directory watch', async () => {
    const { bus, a, b } = await setup({ receive_max_wait_seconds: 60 });
    // A poll far longer than the wait: only the watch can wake this receive before its deadline.
    const waiter = createChangeWaiter(bus.dir, 120_000);
    try {
      const started = Date.now();
      const waiting = receive(b, { as: 'Kim', wait_seconds: 30 }, { waiter });
      // These contexts announce nothing themselves: ring the bell as a committing server does.
      setTimeout(() => void say(a, 'general', 'wake up').then(() => ringBell(bus.dir)), 50);
      const result = await waiting;
      expect(contents(result)).toEqual(['wake up']);
      // Woken, not found by the look at the wait's end (30 s) or by the poll (120 s).
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      waiter.close();
    }
  });

  it('returns an empty result and creates no batch when aborted while waiting', async () => {
    const { a, b } = await setup();
    const controller = new AbortController();
    const waiting = receive(b, { as: 'Kim', wait_seconds: 30 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toEqual({ messages: [], batch_token: null, redelivered: false, notices: [] });
    expect(pendingTokens(b)).toHaveLength(0);
    await say(a, 'general', 'after');
    const next = await receive(b, { as: 'Kim' });
    expect(contents(next)).toEqual(['after']);
    expect(next.redelivered).toBe(false);
  });

  it('reports progress while waiting', async () => {
    const { b } = await setup();
    const progress: [number, number][] = [];
    // The system clock: this wait must really end after 1.3 s.
    const result = await receive({ ...b, clock: systemClock }, { as: 'Kim', wait_seconds: 1.3 }, { onProgress: (elapsed, total) => progress.push([elapsed, total]) });
    expect(result.messages).toEqual([]);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]![1]).toBe(1300);
  });
});
