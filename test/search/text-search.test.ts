import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusError, isBusError } from '../../src/bus/bus-error.js';
import { deleteMemory, editMemory } from '../../src/bus/memories.js';
import { search } from '../../src/bus/search.js';
import { send } from '../../src/bus/send.js';
import { busFixture, channel, registerAs, withConfig, type Fixture } from '../support/bus.js';
import { expectError } from '../support/expect-error.js';

let fx: Fixture;
let sam: string;
let kim: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam');
  kim = registerAs(fx.ctx, 'Kim');
  channel(fx.ctx, sam, 'notes', 'memory');
  channel(fx.ctx, sam, 'chat', 'ordinary');
});

afterEach(async () => {
  await fx.close();
});

async function post(as: string, ch: string, content: string, extra: Record<string, unknown> = {}): Promise<number> {
  return (await send(fx.ctx, { as, channel: ch, content, ...extra })).seq;
}

const seqs = (r: { results: { seq: number }[] }) => r.results.map((x) => x.seq);

async function error(input: Record<string, unknown>): Promise<{ code: string; field: string | undefined }> {
  const e = await expectError(() => search(fx.ctx, input), BusError);
  return { code: e.code, field: e.field };
}

describe('text search', () => {
  it('finds messages and memories by words, best match first, with the message fields and a score', async () => {
    const a = await post(sam, 'chat', 'the deploy script needs the staging token');
    const b = await post(kim, 'notes', 'deploy: run the deploy script from the repo root, deploy twice if flaky');
    await post(sam, 'chat', 'lunch at noon');
    const result = await search(fx.ctx, { as: sam, query: 'deploy script' });
    expect(result.mode).toBe('text');
    expect(result.notices).toEqual([]);
    expect(result.continuation).toBeNull();
    expect(seqs(result)).toEqual([b, a]);
    expect(result.results[0]).toMatchObject({ seq: b, channel: 'notes', sender: kim, memory_id: b, revision: 1, type: 'message' });
    expect(result.results[0]?.score).toBeGreaterThan(result.results[1]?.score as number);
    expect(result.results[1]).not.toHaveProperty('memory_id');
  });

  it('requires every word, keeps quoted phrases and matches a trailing * as a prefix', async () => {
    const a = await post(sam, 'chat', 'building the release');
    const b = await post(sam, 'chat', 'release the build');
    expect(seqs(await search(fx.ctx, { as: sam, query: 'build*' }))).toEqual(expect.arrayContaining([a, b]));
    expect(seqs(await search(fx.ctx, { as: sam, query: 'build release' }))).toEqual([b]);
    expect(seqs(await search(fx.ctx, { as: sam, query: '"the release"' }))).toEqual([a]);
  });

  it('never returns a superseded or deleted revision', async () => {
    const id = await post(sam, 'notes', 'the cache lives in redis');
    const edit = await editMemory(fx.ctx, { as: kim, memory_id: id, content: 'the cache lives in sqlite now' });
    expect(seqs(await search(fx.ctx, { as: sam, query: 'redis' }))).toEqual([]);
    const found = await search(fx.ctx, { as: sam, query: 'cache' });
    expect(seqs(found)).toEqual([edit.seq]);
    expect(found.results[0]).toMatchObject({ memory_id: id, revision: 2, content: 'the cache lives in sqlite now' });
    await deleteMemory(fx.ctx, { as: sam, memory_id: id });
    expect(seqs(await search(fx.ctx, { as: sam, query: 'cache' }))).toEqual([]);
  });

  it('filters by channel, sender, time range and thread', async () => {
    const t0 = fx.clock.now();
    const root = await post(sam, 'chat', 'topic alpha: should we ship');
    fx.clock.advance(60_000);
    const reply = await post(kim, 'chat', 'alpha yes ship it', { reply_to: root });
    fx.clock.advance(60_000);
    const nested = await post(sam, 'chat', 'alpha agreed', { reply_to: reply });
    const other = await post(kim, 'notes', 'alpha is the codename');
    const iso = (ms: number) => new Date(ms).toISOString();

    expect(seqs(await search(fx.ctx, { as: sam, query: 'alpha', channel: 'notes' }))).toEqual([other]);
    expect(new Set(seqs(await search(fx.ctx, { as: sam, query: 'alpha', sender: kim })))).toEqual(new Set([reply, other]));
    expect(new Set(seqs(await search(fx.ctx, { as: sam, query: 'alpha', since: iso(t0 + 60_000), until: iso(t0 + 120_000) })))).toEqual(
      new Set([reply]),
    );
    expect(new Set(seqs(await search(fx.ctx, { as: sam, query: 'alpha', thread: root })))).toEqual(new Set([root, reply, nested]));
    expect(new Set(seqs(await search(fx.ctx, { as: sam, query: 'alpha', thread: reply })))).toEqual(new Set([reply, nested]));
    expect(seqs(await search(fx.ctx, { as: sam, query: 'alpha', thread: root, sender: sam, until: iso(t0 + 1) }))).toEqual([root]);
  });

  it('pages with count and continuation through the whole ranking without repeats', async () => {
    const all: number[] = [];
    for (let i = 0; i < 25; i++) all.push(await post(sam, 'chat', `paging word ${'x'.repeat(i)}`));
    const seen: number[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await search(fx.ctx, { as: sam, query: 'paging', count: 10, ...(continuation ? { continuation } : {}) });
      seen.push(...seqs(page));
      continuation = page.continuation ?? undefined;
      pages++;
    } while (continuation !== undefined);
    expect(pages).toBe(3);
    expect(seen.sort((a, b) => a - b)).toEqual(all);
  });

  it('stops a page early at the result byte ceiling and continues from there', async () => {
    for (let i = 0; i < 6; i++) await post(sam, 'chat', `ceiling ${'y'.repeat(600)} ${i}`);
    const small = withConfig(fx.ctx, { result_default_kib: 2 });
    const first = await search(small, { as: sam, query: 'ceiling' });
    expect(first.results.length).toBeGreaterThan(0);
    expect(first.results.length).toBeLessThan(6);
    expect(first.continuation).not.toBeNull();
    const rest = await search(small, { as: sam, query: 'ceiling', continuation: first.continuation, count: 100 });
    expect(new Set([...seqs(first), ...seqs(rest)]).size).toBe(first.results.length + rest.results.length);
  });

  it('refuses a continuation from another search or one that was tampered with', async () => {
    for (let i = 0; i < 3; i++) await post(sam, 'chat', `token test ${i}`);
    const page = await search(fx.ctx, { as: sam, query: 'token', count: 1 });
    expect(page.continuation).not.toBeNull();
    expect(await error({ as: sam, query: 'test', count: 1, continuation: page.continuation })).toEqual({ code: 'validation', field: 'continuation' });
    expect(await error({ as: sam, query: 'token', channel: 'chat', continuation: page.continuation })).toEqual({
      code: 'validation',
      field: 'continuation',
    });
    expect(await error({ as: sam, query: 'token', continuation: 'not-a-token' })).toEqual({ code: 'validation', field: 'continuation' });
    // Count may change between pages.
    expect((await search(fx.ctx, { as: sam, query: 'token', count: 5, continuation: page.continuation })).results).toHaveLength(2);
  });

  it('validates count, times, mode and the caller', async () => {
    expect(await error({ as: sam, query: 'x', count: 0 })).toEqual({ code: 'validation', field: 'count' });
    expect(await error({ as: sam, query: 'x', count: 1001 })).toEqual({ code: 'validation', field: 'count' });
    expect(await error({ as: sam, query: 'x', count: 1.5 })).toEqual({ code: 'validation', field: 'count' });
    expect(await error({ as: sam, query: 'x', since: 'yesterday' })).toEqual({ code: 'validation', field: 'since' });
    expect(await error({ as: sam, query: 'x', until: '2026-11-30' })).toEqual({ code: 'validation', field: 'until' });
    expect(await error({ as: sam, query: 'x', since: '2026-11-30T12:00:00Z', until: '2026-11-30T11:00:00Z' })).toEqual({
      code: 'validation',
      field: 'until',
    });
    expect(await error({ as: sam, query: 'x', mode: 'fuzzy' })).toEqual({ code: 'validation', field: 'mode' });
    expect(await error({ as: sam, query: '' })).toEqual({ code: 'validation', field: 'query' });
    expect(await error({ as: sam, query: 'x', thread: 0 })).toEqual({ code: 'validation', field: 'thread' });
    expect(await error({ as: sam, query: 'x', channel: 'nope' })).toEqual({ code: 'not_found', field: 'channel' });
    expect((await error({ as: 'Ghost', query: 'x' })).code).toBe('not_registered');
  });

  it('answers semantic mode without embeddings as text with a semantic_unavailable notice', async () => {
    const a = await post(sam, 'notes', 'the staging database password rotates weekly');
    const result = await search(fx.ctx, { as: sam, query: 'staging password', mode: 'semantic' });
    expect(result.mode).toBe('text');
    expect(seqs(result)).toEqual([a]);
    expect(result.notices.map((n) => n.kind)).toEqual(['semantic_unavailable']);
  });
});
