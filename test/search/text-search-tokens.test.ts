/**
 * Text ranking windows: words counted as the index splits them (split from text-search-windows.test.ts), FTS5's unicode61 tokens on SQLite and the same tokens in PostgreSQL's tsvector (sql/postgres/0014).
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
      // What PostgreSQL's default parser reads whole (addresses, URLs, versions, signed and scientific numbers, hyphenated words).
      "mail sam@example.com at https://example.org/a-b?c=1 v1.2.3 and 1e5x or -42 +7 don't re-use foo_bar_baz",
    ];
    const made = bulk(texts);
    // The index's own tokens of each message, in order (FTS5's unicode61, or the tsvector of sql/postgres/0014).
    for (const [i, seq] of made.entries()) {
      expect(relevanceTokens(texts[i] as string)).toEqual(bus.indexedTokens(seq));
    }
    // So a message holding the word twice, in any case or accent, ranks above one holding it once.
    const once = await post('resume of the plan, then other words');
    const twice = await post('Résumé of the plan: RESUME it');
    expect(seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'résumé' }))).toEqual([twice, once]);
  });

  it('finds those words as FTS5 does: inside addresses and versions, in any case or accent, phrases in order, prefixes', async () => {
    const address = await post('mail sam@example.com about v1.2.3 at https://example.org/a-b');
    const accents = await post('Le CAFÉ naïf, Crème brûlée');
    const find = async (query: string) => seqs(await search(bus.fx.ctx, { as: bus.sam, query }));
    expect(await find('example')).toEqual([address]);
    expect(await find('sam com')).toEqual([address]);
    expect(await find('"v1 2 3"')).toEqual([address]);
    expect(await find('"a b"')).toEqual([address]);
    expect(await find('cafe NAIF')).toEqual([accents]);
    expect(await find('"creme brulee"')).toEqual([accents]);
    expect(await find('"brûlée crème"')).toEqual([]);
    expect(await find('brû*')).toEqual([accents]);
    expect(await find('CRÈ* caf*')).toEqual([accents]);
  });
});
