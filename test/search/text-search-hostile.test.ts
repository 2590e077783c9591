/**
 * Text search never turns FTS5 syntax in a query into an internal error (split from text-search.test.ts), and an unaccented query finds accented words on every engine (FTS5's unicode61, PostgreSQL's tsvector of sql/postgres/0014).
 */
import { describe, expect, it } from 'vitest';
import { BusError, isBusError } from '../../src/bus/bus-error.js';
import { search } from '../../src/bus/search.js';
import { expectError } from '../support/expect-error.js';
import { useTextSearchBus } from './text-search-bus.js';

const bus = useTextSearchBus();

async function error(input: Record<string, unknown>): Promise<{ code: string; field: string | undefined }> {
  const e = await expectError(() => search(bus.fx.ctx, input), BusError);
  return { code: e.code, field: e.field };
}

describe('text search', () => {
  it('never turns FTS5 syntax in a query into an internal error', async () => {
    await bus.post('col: AND OR NOT near (paren) "quoted" star* naïve café 東京 emoji 🎉 x^y');
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
      // A word longer than PostgreSQL's lexemes may be (2047 bytes).
      'w'.repeat(3000),
    ];
    for (const query of hostile) {
      // A hostile query may succeed; when it fails, it fails as a validation error on `query`.
      let outcome: unknown;
      try {
        await search(bus.fx.ctx, { as: bus.sam, query });
        continue;
      } catch (error) {
        outcome = error;
      }
      expect(isBusError(outcome, 'validation'), `query ${JSON.stringify(query)} gave ${String(outcome)}`).toBe(true);
      expect((outcome as { field?: string }).field).toBe('query');
    }
    expect((await search(bus.fx.ctx, { as: bus.sam, query: 'AND OR NOT' })).results).toHaveLength(1);
    expect((await search(bus.fx.ctx, { as: bus.sam, query: 'naive cafe' })).results).toHaveLength(1);
    expect((await search(bus.fx.ctx, { as: bus.sam, query: '東京' })).results).toHaveLength(1);
    expect((await search(bus.fx.ctx, { as: bus.sam, query: 'col:' })).results).toHaveLength(1);
    expect(await error({ as: bus.sam, query: '( ) * "' })).toEqual({ code: 'validation', field: 'query' });
    // FTS5 indexes a word of any length; PostgreSQL's tsvector leaves one over 2047 bytes out, and says so for a query.
    const long = { as: bus.sam, query: 'w'.repeat(3000) };
    if (bus.fx.ctx.db.capabilities.fullText === 'tsvector') expect(await error(long)).toEqual({ code: 'validation', field: 'query' });
    else expect((await search(bus.fx.ctx, long)).results).toEqual([]);
    expect(bus.fx.ctx.db.get<{ n: number }>('SELECT count(*) AS n FROM messages')?.n).toBe(1);
  });
});
