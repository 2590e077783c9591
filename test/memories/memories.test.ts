import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import { deleteMemory, editMemory, getMemory } from '../../src/bus/memories.js';
import { RateLimiter } from '../../src/bus/rate-limiter.js';
import { send } from '../../src/bus/send.js';
import { busFixture, channel, registerAs, withConfig, type Fixture } from '../support/bus.js';
import { expectError } from '../support/expect-error.js';
import { revisions } from '../support/rows.js';

let fx: Fixture;
let sam: string;
let kim: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam', 'repo-a');
  kim = registerAs(fx.ctx, 'Kim', 'repo-b');
  channel(fx.ctx, sam, 'notes', 'memory');
  channel(fx.ctx, sam, 'chat', 'ordinary');
});

afterEach(async () => {
  await fx.close();
});

async function memory(content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const result = await send(fx.ctx, { as: sam, channel: 'notes', content, ...extra });
  return result.memory_id as number;
}

async function code(fn: () => unknown): Promise<string> {
  return (await expectError(fn, BusError)).code;
}

describe('get_memory', () => {
  it('returns the live revision as a message', async () => {
    const id = await memory('the build uses pnpm', { type: 'fact', metadata: { topic: 'build' } });
    expect(getMemory(fx.ctx, { as: kim, memory_id: id })).toMatchObject({
      seq: id,
      memory_id: id,
      revision: 1,
      channel: 'notes',
      sender: sam,
      context: 'repo-a',
      type: 'fact',
      content: 'the build uses pnpm',
      metadata: { topic: 'build' },
      references: [],
      reply_to: null,
    });
  });

  it('is not_found for an unknown id, an ordinary message and a later revision seq', async () => {
    const id = await memory('v1');
    const ordinary = (await send(fx.ctx, { as: sam, channel: 'chat', content: 'hi' })).seq;
    const edited = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2' });
    expect(await code(() => getMemory(fx.ctx, { as: sam, memory_id: 9999 }))).toBe('not_found');
    expect(await code(() => getMemory(fx.ctx, { as: sam, memory_id: ordinary }))).toBe('not_found');
    expect(await code(() => getMemory(fx.ctx, { as: sam, memory_id: edited.seq }))).toBe('not_found');
  });

  it('validates its input and the caller', async () => {
    const error = await expectError(() => getMemory(fx.ctx, { as: sam, memory_id: 0 }), BusError, 'validation');
    expect(error.field).toBe('memory_id');
    expect(await code(() => getMemory(fx.ctx, { as: sam, memory_id: 1, extra: true }))).toBe('validation');
    expect(await code(() => getMemory(fx.ctx, { as: 'Nobody', memory_id: 1 }))).toBe('not_registered');
  });
});

describe('edit_memory', () => {
  it('tombstones the live revision and inserts the next, written by the editor', async () => {
    const id = await memory('the build uses npm');
    fx.clock.advance(1_000);
    const result = await editMemory(fx.ctx, { as: kim, memory_id: id, content: 'the build uses pnpm' });
    expect(result).toMatchObject({ memory_id: id, revision: 2, replaced_revision: 1, replaced_seq: id });
    expect(result.seq).toBeGreaterThan(id);

    expect(revisions(fx.ctx, id)).toEqual([
      { seq: id, revision: 1, tombstone: 1, content: 'the build uses npm', sender: sam },
      { seq: result.seq, revision: 2, tombstone: 0, content: 'the build uses pnpm', sender: kim },
    ]);
    const tombstoneAt = fx.ctx.db.get<{ t: number }>('SELECT tombstone_at AS t FROM messages WHERE seq = ?', [id])?.t;
    expect(tombstoneAt).toBe(fx.clock.now());
    expect(getMemory(fx.ctx, { as: sam, memory_id: id })).toMatchObject({
      seq: result.seq,
      revision: 2,
      sender: kim,
      context: 'repo-b',
      channel: 'notes',
      content: 'the build uses pnpm',
      created_at: new Date(fx.clock.now()).toISOString(),
    });
  });

  it('carries omitted envelope fields over and replaces given ones', async () => {
    const id = await memory('v1', { type: 'fact', metadata: { topic: 'build' }, references: [{ kind: 'url', value: 'https://x.test' }] });
    await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2' });
    expect(getMemory(fx.ctx, { as: sam, memory_id: id })).toMatchObject({
      content: 'v2',
      type: 'fact',
      metadata: { topic: 'build' },
      references: [{ kind: 'url', value: 'https://x.test' }],
    });
    await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v3', type: 'decision', metadata: {}, references: [], reply_to: id });
    expect(getMemory(fx.ctx, { as: sam, memory_id: id })).toMatchObject({
      content: 'v3',
      type: 'decision',
      metadata: {},
      references: [],
      reply_to: id,
      revision: 3,
    });
  });

  it('lets the last committed write win and names the revision it replaced', async () => {
    const id = await memory('v1');
    // Both editors read revision 1; the second commit replaces the first edit, and says so.
    const first = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'from Sam' });
    const second = await editMemory(fx.ctx, { as: kim, memory_id: id, content: 'from Kim' });
    expect(first).toMatchObject({ revision: 2, replaced_revision: 1 });
    expect(second).toMatchObject({ revision: 3, replaced_revision: 2, replaced_seq: first.seq });
    expect(getMemory(fx.ctx, { as: sam, memory_id: id }).content).toBe('from Kim');
    expect(revisions(fx.ctx, id).filter((r) => r.tombstone === 0)).toHaveLength(1);
  });

  it('serializes concurrent edits: every edit commits once and exactly one revision stays live', async () => {
    const id = await memory('v0');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => editMemory(fx.ctx, { as: i % 2 === 0 ? sam : kim, memory_id: id, content: `edit ${i}` })),
    );
    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(results.map((r) => r.replaced_revision)).size).toBe(8);
    const rows = revisions(fx.ctx, id);
    expect(rows.filter((r) => r.tombstone === 0).map((r) => r.revision)).toEqual([9]);
  });

  it('is not_found for a deleted memory and for ids that are not memories, changing nothing', async () => {
    const id = await memory('v1');
    const ordinary = (await send(fx.ctx, { as: sam, channel: 'chat', content: 'hi' })).seq;
    await deleteMemory(fx.ctx, { as: sam, memory_id: id });
    const count = () => fx.ctx.db.get<{ n: number }>('SELECT count(*) AS n FROM messages')?.n;
    const before = count();
    expect(await code(() => editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2' }))).toBe('not_found');
    expect(await code(() => editMemory(fx.ctx, { as: sam, memory_id: ordinary, content: 'v2' }))).toBe('not_found');
    expect(await code(() => editMemory(fx.ctx, { as: sam, memory_id: 424242, content: 'v2' }))).toBe('not_found');
    expect(count()).toBe(before);
  });

  it('refuses bad input with the field named and changes nothing', async () => {
    const id = await memory('v1');
    const cases: [Record<string, unknown>, string][] = [
      [{ as: sam, memory_id: id, content: '' }, 'content'],
      [{ as: sam, memory_id: id }, 'content'],
      [{ as: sam, memory_id: -1, content: 'x' }, 'memory_id'],
      [{ as: sam, memory_id: id, content: 'x', type: 'bad type!' }, 'type'],
      [{ as: sam, memory_id: id, content: 'x', metadata: { k: 1 } }, 'metadata.k'],
      [{ as: sam, memory_id: id, content: 'x', reply_to: 99999 }, 'reply_to'],
      [{ as: sam, memory_id: id, content: 'x'.repeat(70 * 1024) }, 'content'],
      [{ as: sam, memory_id: id, content: 'x', idempotency_key: '' }, 'idempotency_key'],
    ];
    for (const [input, field] of cases) {
      const error = await expectError(() => editMemory(fx.ctx, input), BusError);
      expect(error.code, JSON.stringify(input).slice(0, 80)).toBe('validation');
      expect(error.field).toBe(field);
    }
    expect(revisions(fx.ctx, id)).toHaveLength(1);
    expect(await code(() => editMemory(fx.ctx, { as: 'Ghost', memory_id: id, content: 'x' }))).toBe('not_registered');
  });

  it('replays a keyed edit with the original result and refuses the key for another payload', async () => {
    const id = await memory('v1');
    const first = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2', idempotency_key: 'k1' });
    await editMemory(fx.ctx, { as: kim, memory_id: id, content: 'v3' });
    const replay = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2', idempotency_key: 'k1' });
    expect(replay).toEqual(first);
    expect(revisions(fx.ctx, id)).toHaveLength(3);
    expect(await code(() => editMemory(fx.ctx, { as: sam, memory_id: id, content: 'other', idempotency_key: 'k1' }))).toBe('conflict');
    // Keys are scoped to the sender.
    expect((await editMemory(fx.ctx, { as: kim, memory_id: id, content: 'v2', idempotency_key: 'k1' })).revision).toBe(4);
  });

  it('charges the rate limit per edit but not for a replay', async () => {
    const limited = { ...fx.ctx, rateLimiter: new RateLimiter({ send_messages_per_second: 1, send_kib_per_second: 64, max_message_kib: 64 }) };
    const id = await memory('v1');
    const first = await editMemory(limited, { as: sam, memory_id: id, content: 'v2', idempotency_key: 'a' });
    expect(await editMemory(limited, { as: sam, memory_id: id, content: 'v2', idempotency_key: 'a' })).toEqual(first);
    expect(await code(() => editMemory(limited, { as: sam, memory_id: id, content: 'v3' }))).toBe('rate_limited');
    expect(await code(() => deleteMemory(limited, { as: sam, memory_id: id }))).toBe('rate_limited');
    fx.clock.advance(1_000);
    expect((await editMemory(limited, { as: sam, memory_id: id, content: 'v3' })).revision).toBe(3);
  });
});

describe('capacity', () => {
  it('refuses an edit with capacity_exhausted when memories fill the budget, yet still allows a delete', async () => {
    const id = await memory('v1');
    const full = withConfig(fx.ctx, { sqlite_budget_mib: 0 });
    expect(await code(() => editMemory(full, { as: sam, memory_id: id, content: 'v2' }))).toBe('capacity_exhausted');
    expect(revisions(fx.ctx, id).map((r) => [r.revision, r.tombstone])).toEqual([[1, 0]]);
    expect(await deleteMemory(full, { as: sam, memory_id: id })).toMatchObject({ memory_id: id, revision: 1 });
  });
});

describe('delete_memory', () => {
  it('tombstones the live revision only, then get and edit are not_found', async () => {
    const id = await memory('v1');
    const edited = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2' });
    const result = await deleteMemory(fx.ctx, { as: kim, memory_id: id });
    expect(result).toEqual({ memory_id: id, seq: edited.seq, revision: 2 });
    expect(revisions(fx.ctx, id).map((r) => [r.revision, r.tombstone])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(await code(() => getMemory(fx.ctx, { as: sam, memory_id: id }))).toBe('not_found');
    expect(await code(() => editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v3' }))).toBe('not_found');
    expect(await code(() => deleteMemory(fx.ctx, { as: sam, memory_id: id }))).toBe('not_found');
  });

  it('replays a keyed delete with the original result', async () => {
    const id = await memory('v1');
    const first = await deleteMemory(fx.ctx, { as: sam, memory_id: id, idempotency_key: 'del' });
    expect(await deleteMemory(fx.ctx, { as: sam, memory_id: id, idempotency_key: 'del' })).toEqual(first);
    const other = await memory('another');
    expect(await code(() => deleteMemory(fx.ctx, { as: sam, memory_id: other, idempotency_key: 'del' }))).toBe('conflict');
  });

  it('rings the bell once it has committed, as send and edit do, and not for a replay', async () => {
    const id = await memory('to be deleted');
    const rung: string[] = [];
    const ctx = { ...fx.ctx, announce: () => rung.push(getLive(id)) };
    const getLive = (memory_id: number): string => (fx.ctx.db.get<{ n: number }>('SELECT count(*) AS n FROM messages WHERE memory_id = ? AND tombstone = 0', [memory_id]) as { n: number }).n === 0 ? 'deleted' : 'live';
    await editMemory(ctx, { as: sam, memory_id: id, content: 'edited' });
    await deleteMemory(ctx, { as: sam, memory_id: id, idempotency_key: 'bell' });
    await deleteMemory(ctx, { as: sam, memory_id: id, idempotency_key: 'bell' });
    // On a server engine the commit itself notifies (commit-wake.ts); the bell files are SQLite's.
    expect(rung).toEqual(fx.ctx.db.capabilities.wakeups === 'bell-file' ? ['live', 'deleted'] : []);
  });
});
