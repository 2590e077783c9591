/**
 * Text ranking windows: words counted as the index splits them (split from text-search-windows.test.ts: FTS5's unicode61 folding, which postgres's simple parser does not do yet, test/postgres/not-on-postgres.ts).
 *
 * The text ranking's rules at scale: relevance within windows of the newest
 * TEXT_WINDOW matches, recency between windows and as the tie-break, a
 * continuation that pages across windows and ignores messages sent between
 * pages, and results that do not depend on how FTS5's segments are merged.
 */
import { describe, expect, it } from 'vitest';
import { search } from '../../src/bus/search.js';
import { relevanceTokens } from '../../src/bus/search-relevance.js';
import { seqs, useTextSearchBus } from './text-search-bus.js';

const bus = useTextSearchBus();
const { bulk, post } = bus;

describe('text ranking windows', () => {
  it('counts words as the index splits them: case, diacritics, digits and scripts beyond ASCII', async () => {
    const texts = [
      'Plain ASCII, with punctuation: snake_case v2.0 and dont-split? no!',
      'Café NAÏVE façade Ærøskøbing über ÜBER',
      '東京タワー and Ελληνικά κείμενα, emoji 🎉 between words',
      'हिन्दी पाठ and a combining e\u0301 beside ñ',
      'tab\tnew\nline  spaces\u00a0nbsp x^y 3.14',
    ];
    const made = bulk(texts);
    // FTS5's own tokens of each message, in order (fts5vocab over the live index).
    bus.fx.ctx.db.run('CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, messages_fts, instance)');
    for (const [i, seq] of made.entries()) {
      const indexed = bus.fx.ctx.db.all<{ term: string }>('SELECT term FROM temp.fts_instances WHERE doc = ? ORDER BY offset', [seq]).map((r) => r.term);
      expect(relevanceTokens(texts[i] as string)).toEqual(indexed);
    }
    // So a message holding the word twice, in any case or accent, ranks above one holding it once.
    const once = await post('resume of the plan, then other words');
    const twice = await post('Résumé of the plan: RESUME it');
    expect(seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'résumé' }))).toEqual([twice, once]);
  });
});
