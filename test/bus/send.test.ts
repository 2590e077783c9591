import { describe, expect, it } from 'vitest';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { RateLimiter } from '../../src/bus/rate-limiter.js';
import { canonicalJson, receiptFingerprint } from '../../src/bus/receipts.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import type { Config } from '../../src/config.js';
import { deleteExpiredReceipts } from '../../src/maintenance/stale-rows.js';
import { createBus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

async function setup(overrides: Partial<Config> = {}, withLimiter = false) {
  const bus = await createBus(overrides);
  const a = await bus.process('A', withLimiter ? { rateLimiter: new RateLimiter(bus.config) } : {});
  const b = await bus.process('B');
  register(a, { name: 'Sam', context: 'agentbus' });
  register(b, { name: 'Kim' });
  createChannel(a, { as: 'Sam', name: 'general' });
  createChannel(a, { as: 'Sam', name: 'memory', kind: 'memory' });
  subscribe(b, { as: 'Kim', channel: 'general' });
  subscribe(b, { as: 'Kim', channel: 'memory' });
  return { bus, a, b };
}

const count = (ctx: { db: { get: (sql: string) => unknown } }) => ctx.db.get('SELECT count(*) AS n FROM messages');

describe('send', () => {
  it('stores the envelope verbatim with sender, context and time set by the bus', async () => {
    const { bus, a, b } = await setup();
    const first = await send(a, { as: 'Sam', channel: 'general', content: 'hello' });
    const references = [
      { kind: 'url', value: 'https://example.com/a?b=c#d' },
      { kind: 'unix_path', value: '/home/sam/x y/z.ts' },
      { kind: 'windows_path', value: 'C:\\Users\\Sam\\file name.txt' },
    ];
    const ok = await send(a, { as: 'Sam', channel: 'general', content: 'reply', type: 'question', reply_to: first.seq, metadata: { priority: 'high' }, references });
    expect(ok.seq).toBeGreaterThan(first.seq);
    const { messages } = await receive(b, { as: 'Kim' });
    expect(messages).toEqual([
      {
        seq: first.seq,
        channel: 'general',
        sender: 'Sam',
        context: 'agentbus',
        created_at: new Date(bus.clock.ms).toISOString(),
        type: 'message',
        content: 'hello',
        reply_to: null,
        metadata: {},
        references: [],
      },
      {
        seq: ok.seq,
        channel: 'general',
        sender: 'Sam',
        context: 'agentbus',
        created_at: new Date(bus.clock.ms).toISOString(),
        type: 'question',
        content: 'reply',
        reply_to: first.seq,
        metadata: { priority: 'high' },
        references,
      },
    ]);
  });

  it('on a memory channel creates a memory: memory_id is its seq, revision 1', async () => {
    const { a, b } = await setup();
    const result = await send(a, { as: 'Sam', channel: 'memory', content: 'the build uses tsc' });
    expect(result).toEqual({ seq: result.seq, memory_id: result.seq, revision: 1 });
    const { messages } = await receive(b, { as: 'Kim' });
    expect(messages[0]).toMatchObject({ seq: result.seq, memory_id: result.seq, revision: 1 });
  });

  it('refuses an envelope over max_message_kib, naming the field, and stores nothing', async () => {
    const { a } = await setup({ max_message_kib: 1 });
    const big = await expectError(() => send(a, { as: 'Sam', channel: 'general', content: 'x'.repeat(1024) }), BusError);
    expect(big.code).toBe('validation');
    expect(big.field).toBe('content');
    const meta = await expectError(() => send(a, { as: 'Sam', channel: 'general', content: 'x', metadata: { k: 'v'.repeat(1100) } }), BusError);
    expect(meta.field).toBe('metadata');
    expect(count(a)).toEqual({ n: 0 });
    // The limit covers the complete serialized envelope, so a message just under it fits.
    await send(a, { as: 'Sam', channel: 'general', content: 'x'.repeat(800) });
    expect(count(a)).toEqual({ n: 1 });
  });

  it('rejects bad input naming the field', async () => {
    const { a } = await setup();
    const cases: [Record<string, unknown>, string][] = [
      [{ channel: 'general', content: 'x' }, 'as'],
      [{ as: 'Sam', content: 'x' }, 'channel'],
      [{ as: 'Sam', channel: 'general' }, 'content'],
      [{ as: 'Sam', channel: 'general', content: 'x', sender: 'Kim' }, 'sender'],
      [{ as: 'Sam', channel: 'general', content: 'x', reply_to: 1.5 }, 'reply_to'],
      [{ as: 'Sam', channel: 'general', content: 'x', reply_to: 999 }, 'reply_to'],
      [{ as: 'Sam', channel: 'general', content: 'x', metadata: { a: 1 } }, 'metadata.a'],
      [{ as: 'Sam', channel: 'general', content: 'x', references: [{ kind: 'ftp', value: 'x' }] }, 'references.0.kind'],
      [{ as: 'Sam', channel: 'general', content: 'x', references: [{ kind: 'url', value: 'x', extra: 1 }] }, 'references.0.extra'],
      [{ as: 'Sam', channel: 'general', content: 'x', type: 'has space' }, 'type'],
      [{ as: 'Sam', channel: 'general', content: 'x', idempotency_key: 'k'.repeat(257) }, 'idempotency_key'],
    ];
    for (const [input, field] of cases) {
      const error = await expectError(() => send(a, input), BusError);
      expect([error.code, error.field]).toEqual(['validation', field]);
    }
    expect(count(a)).toEqual({ n: 0 });
  });

  it('is not_registered for a name this process does not hold', async () => {
    const { a, b } = await setup();
    expect((await expectError(() => send(b, { as: 'Sam', channel: 'general', content: 'x' }), BusError)).code).toBe('not_registered');
    expect((await expectError(() => send(a, { as: 'Nobody', channel: 'general', content: 'x' }), BusError)).code).toBe('not_registered');
  });
});

describe('idempotency receipts', () => {
  it('replays the original result without a new row; a different payload is conflict', async () => {
    const { a, b } = await setup();
    const input = { as: 'Sam', channel: 'general', content: 'once', metadata: { a: '1', b: '2' }, idempotency_key: 'k1' };
    const first = await send(a, input);
    expect(await send(a, input)).toEqual(first);
    // Key order does not change the fingerprint.
    expect(await send(a, { idempotency_key: 'k1', metadata: { b: '2', a: '1' }, content: 'once', channel: 'general', as: 'Sam' })).toEqual(first);
    expect(count(a)).toEqual({ n: 1 });
    const conflict = await expectError(() => send(a, { ...input, content: 'twice' }), BusError);
    expect([conflict.code, conflict.field]).toEqual(['conflict', 'idempotency_key']);
    // Keys are scoped to the sender.
    const other = await send(b, { ...input, as: 'Kim' });
    expect(other.seq).not.toBe(first.seq);
    expect(count(a)).toEqual({ n: 2 });
  });

  it('keeps a receipt for receipt_retention_minutes of monotonic time, whatever the wall clock does; then the tick forgets it', async () => {
    const { bus, a } = await setup({ receipt_retention_minutes: 1 });
    const input = { as: 'Sam', channel: 'general', content: 'once', idempotency_key: 'k' };
    const first = await send(a, input);
    const tick = () => a.db.transaction(() => deleteExpiredReceipts(a.db, { clock: bus.clock, owner: 'ticker' }, 60_000, 1000));
    // The date is set two hours forward: a retry is still answered from the receipt, and the tick keeps it.
    bus.clock.jump(2 * 3_600_000);
    expect(await send(a, input)).toEqual(first);
    expect(tick()).toBe(0);
    bus.clock.advance(59_999);
    expect(tick()).toBe(0);
    expect(await send(a, input)).toEqual(first);
    expect(count(a)).toEqual({ n: 1 });
    bus.clock.advance(1);
    expect(tick()).toBe(1);
    const again = await send(a, input);
    expect(again.seq).toBeGreaterThan(first.seq);
    await expectError(() => send(a, { ...input, content: 'new payload under the renewed key' }), BusError, 'conflict');
  });

  it('fingerprints canonically: key order never matters, values do', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
    expect(receiptFingerprint('send', { a: 1, b: 2 })).toBe(receiptFingerprint('send', { b: 2, a: 1 }));
    expect(receiptFingerprint('send', { a: 1 })).not.toBe(receiptFingerprint('edit_memory', { a: 1 }));
    expect(receiptFingerprint('send', { a: 1 })).not.toBe(receiptFingerprint('send', { a: 2 }));
  });
});

describe('rate limits', () => {
  it('allows a one-second burst, then rate_limited (retryable); replays are not charged; it refills', async () => {
    const { bus, a } = await setup({ send_messages_per_second: 3 }, true);
    const keyed = { as: 'Sam', channel: 'general', content: 'k', idempotency_key: 'k' };
    await send(a, keyed);
    await send(a, { as: 'Sam', channel: 'general', content: '2' });
    await send(a, { as: 'Sam', channel: 'general', content: '3' });
    const limited = await expectError(() => send(a, { as: 'Sam', channel: 'general', content: '4' }), BusError);
    expect([limited.code, limited.retryable]).toEqual(['rate_limited', true]);
    // A replay is answered from its receipt, uncharged, even while limited.
    await send(a, keyed);
    expect(count(a)).toEqual({ n: 3 });
    bus.clock.advance(334);
    await send(a, { as: 'Sam', channel: 'general', content: '5' });
    expect((await expectError(() => send(a, { as: 'Sam', channel: 'general', content: '6' }), BusError)).code).toBe('rate_limited');
  });

  it('refills on the monotonic clock: setting the date back does not hold a sender back for hours', async () => {
    const { bus, a } = await setup({ send_messages_per_second: 2 }, true);
    await send(a, { as: 'Sam', channel: 'general', content: '1' });
    await send(a, { as: 'Sam', channel: 'general', content: '2' });
    expect((await expectError(() => send(a, { as: 'Sam', channel: 'general', content: '3' }), BusError)).code).toBe('rate_limited');
    bus.clock.jump(-2 * 3_600_000);
    bus.clock.advance(500);
    expect((await send(a, { as: 'Sam', channel: 'general', content: '3' })).seq).toEqual(expect.any(Number));
  });

  it('limits bytes per second with a burst of at least one maximum envelope', () => {
    const limiter = new RateLimiter({ send_messages_per_second: 1000, send_kib_per_second: 64, max_message_kib: 64 });
    limiter.charge('Sam', 40 * 1024, 0);
    expect(() => limiter.charge('Sam', 40 * 1024, 0)).toThrow(expect.objectContaining({ code: 'rate_limited' }));
    // Another sender has its own buckets.
    limiter.charge('Kim', 64 * 1024, 0);
    limiter.charge('Sam', 40 * 1024, 250);
    const refund = limiter.charge('Sam', 0, 250);
    refund();
  });

  it('refunds the charge of a send that failed after charging', async () => {
    const { a } = await setup({ send_messages_per_second: 1 }, true);
    // The inspection hook cannot run, so the send fails after its rate charge.
    const hooked = { ...a, config: { ...a.config, inspection_command: ['/nonexistent/agentbus-hook'] } };
    await expect(send(hooked, { as: 'Sam', channel: 'general', content: 'x' })).rejects.toThrow();
    await send(a, { as: 'Sam', channel: 'general', content: 'still within the burst' });
    expect(count(a)).toEqual({ n: 1 });
  });
});

describe('receipt replay skips the hook', () => {
  it('answers a replay from the receipt without running inspection', async () => {
    const { a } = await setup();
    const input = { as: 'Sam', channel: 'general', content: 'once', idempotency_key: 'k' };
    const first = await send(a, input);
    const hooked = { ...a, config: { ...a.config, inspection_command: ['/nonexistent/agentbus-hook'] } };
    expect(await send(hooked, input)).toEqual(first);
    expect(count(a)).toEqual({ n: 1 });
  });
});
