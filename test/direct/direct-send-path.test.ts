/**
 * A direct send goes through the channel send's path: the idempotency key,
 * the rate limit, the inspection hook (told it is direct and to whom),
 * max_message_kib, and eviction (which takes the addressees' rows with it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import { register } from '../../src/bus/identity.js';
import { RateLimiter } from '../../src/bus/rate-limiter.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import type { Config } from '../../src/config.js';
import { evictMessages } from '../../src/maintenance/evict-messages.js';
import { createBus } from '../support/bus.js';
import { fixturePath } from '../support/child-process.js';
import { expectError } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';

async function setup(overrides: Partial<Config> = {}, withLimiter = false) {
  const bus = await createBus(overrides);
  const a = await bus.process('A', withLimiter ? { rateLimiter: new RateLimiter(bus.config) } : {});
  const b = await bus.process('B');
  register(a, { name: 'Sam' });
  register(b, { name: 'Kim' });
  return { bus, a, b };
}

const stored = (ctx: { db: { get: (sql: string) => unknown } }) => ctx.db.get('SELECT (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM direct_recipients) AS recipients');

describe('a direct send', () => {
  it('with an idempotency key stores once and replays the first result; another payload under the key is a conflict', async () => {
    const { a } = await setup();
    const input = { as: 'Sam', to: ['Kim'], content: 'once', idempotency_key: 'k' };
    const first = await send(a, input);
    expect(await send(a, input)).toEqual(first);
    expect(stored(a)).toEqual({ messages: 1, recipients: 1 });
    expect((await expectError(() => send(a, { ...input, to: ['Kim'], content: 'other' }), BusError)).code).toBe('conflict');
    expect((await expectError(() => send(a, { as: 'Sam', channel: 'general', content: 'once', idempotency_key: 'k' }), BusError)).code).toBe('conflict');
  });

  it('is charged to the rate limit like a channel send', async () => {
    const { a } = await setup({ send_messages_per_second: 2 }, true);
    await send(a, { as: 'Sam', to: ['Kim'], content: '1' });
    await send(a, { as: 'Sam', channel: 'general', content: '2' });
    expect((await expectError(() => send(a, { as: 'Sam', to: ['Kim'], content: '3' }), BusError)).code).toBe('rate_limited');
    expect(stored(a)).toEqual({ messages: 2, recipients: 1 });
  });

  it('over max_message_kib is a validation error and stores nothing', async () => {
    const { a } = await setup({ max_message_kib: 1 });
    const error = await expectError(() => send(a, { as: 'Sam', to: ['Kim'], content: 'x'.repeat(2000) }), BusError);
    expect([error.code, error.field]).toEqual(['validation', 'content']);
    expect(stored(a)).toEqual({ messages: 0, recipients: 0 });
  });

  it('is shown to the inspection hook as direct, with its addressees; a denial stores nothing', async () => {
    const { a } = await setup();
    const file = join(tempDir(), 'input.json');
    const hook = fixturePath('hooks/hook.js');
    const recorded = { ...a, config: { ...a.config, inspection_command: [process.execPath, hook, 'record', file] } };
    const { seq } = await send(recorded, { as: 'Sam', to: ['Kim'], content: 'look' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      operation: 'send',
      sender: 'Sam',
      payload: { channel: '@direct', direct: true, to: ['Kim'], content: 'look', type: 'message', reply_to: null, metadata: {}, references: [] },
    });
    const denied = { ...a, config: { ...a.config, inspection_command: [process.execPath, hook, 'deny', 'no'] } };
    expect((await expectError(() => send(denied, { as: 'Sam', to: ['Kim'], content: 'no' }), BusError)).code).toBe('inspection_rejected');
    expect(a.db.get('SELECT max(seq) AS seq FROM messages')).toEqual({ seq });
  });

  it('evicted before the addressee received it takes its recipient rows with it; receive goes on', async () => {
    const { a, b } = await setup();
    const { seq } = await send(a, { as: 'Sam', to: ['Kim'], content: 'gone' });
    const kept = await send(a, { as: 'Sam', to: ['Kim'], content: 'kept' });
    a.db.transaction(() => evictMessages(a.db, [{ seq, channel: '@direct' }]));
    expect(a.db.all('SELECT seq FROM direct_recipients')).toEqual([{ seq: kept.seq }]);
    expect((await receive(b, { as: 'Kim' })).messages.map((m) => m.seq)).toEqual([kept.seq]);
  });
});
