/**
 * Text search never turns FTS5 syntax in a query into an internal error (split from text-search.test.ts: on postgres, unaccented words do not find accented ones yet, test/postgres/not-on-postgres.ts).
 */
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
  it('never turns FTS5 syntax in a query into an internal error', async () => {
    await post(sam, 'chat', 'col: AND OR NOT near (paren) "quoted" star* naïve café 東京 emoji 🎉 x^y');
    const hostile = [
      '"',
      '""',
      '"unterminated',
      '*',
      '**',
      'a*b*',
      'AND',
      'AND OR NOT',
      'NOT near',
      '(',
      ')',
      '(paren',
      'col:',
      'content:paren',
      'messages_fts:x',
      'NEAR(a b, 2)',
      '^start',
      '-minus',
      '+plus',
      'a OR b NOT c',
      '{a b}:c',
      'naive cafe',
      '東京',
      '🎉',
      '\u0000',
      'x\u200by',
      "'; DROP TABLE messages; --",
      'é*',
    ];
    for (const query of hostile) {
      // A hostile query may succeed; when it fails, it fails as a validation error on `query`.
      let outcome: unknown;
      try {
        await search(fx.ctx, { as: sam, query });
        continue;
      } catch (error) {
        outcome = error;
      }
      expect(isBusError(outcome, 'validation'), `query ${JSON.stringify(query)} gave ${String(outcome)}`).toBe(true);
      expect((outcome as { field?: string }).field).toBe('query');
    }
    expect((await search(fx.ctx, { as: sam, query: 'AND OR NOT' })).results).toHaveLength(1);
    expect((await search(fx.ctx, { as: sam, query: 'naive cafe' })).results).toHaveLength(1);
    expect((await search(fx.ctx, { as: sam, query: '東京' })).results).toHaveLength(1);
    expect((await search(fx.ctx, { as: sam, query: 'col:' })).results).toHaveLength(1);
    expect(await error({ as: sam, query: '( ) * "' })).toEqual({ code: 'validation', field: 'query' });
    expect(fx.ctx.db.get<{ n: number }>('SELECT count(*) AS n FROM messages')?.n).toBe(1);
  });
});
