/**
 * Text ranking windows: words counted as the index splits them (split from text-search-windows.test.ts: FTS5's unicode61 folding, which postgres's simple parser does not do yet, test/postgres/not-on-postgres.ts).
 *
 * The text ranking's rules at scale: relevance within windows of the newest
 * TEXT_WINDOW matches, recency between windows and as the tie-break, a
 * continuation that pages across windows and ignores messages sent between
 * pages, and results that do not depend on how FTS5's segments are merged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { search } from '../../src/bus/search.js';
import { relevanceTokens } from '../../src/bus/search-relevance.js';
import { TEXT_WINDOW } from '../../src/bus/search-text-window.js';
import { send } from '../../src/bus/send.js';
import { initialChunkState } from '../../src/maintenance/chunks.js';
import { mergeFtsOnce } from '../../src/maintenance/fts-merge.js';
import { emptyStep } from '../../src/maintenance/step-report.js';
import { busFixture, channel, registerAs, type Fixture } from '../support/bus.js';

let fx: Fixture;
let sam: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam');
  channel(fx.ctx, sam, 'chat', 'ordinary');
});

afterEach(async () => {
  await fx.close();
});

/** Many messages quickly: one transaction of plain inserts (the FTS trigger indexes them as send's would be). */
function bulk(contents: readonly string[]): number[] {
  return fx.ctx.db.transaction(() =>
    contents.map(
      (content) =>
        Number(
          fx.ctx.db.get<{ seq: number }>(
            "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('chat', ?, 'test', ?, 'message', ?, ?) RETURNING seq",
            [sam, fx.clock.now(), content, content.length],
          )!.seq,
        ),
    ),
  );
}

type Page = Awaited<ReturnType<typeof search>>;
const seqs = (r: Page) => r.results.map((x) => x.seq);

async function allPages(input: Record<string, unknown>): Promise<{ seqs: number[]; scores: number[]; pages: number }> {
  const out = { seqs: [] as number[], scores: [] as number[], pages: 0 };
  let continuation: string | undefined;
  do {
    const page = await search(fx.ctx, { as: sam, ...input, ...(continuation ? { continuation } : {}) });
    out.seqs.push(...seqs(page));
    out.scores.push(...page.results.map((r) => r.score));
    continuation = page.continuation ?? undefined;
    out.pages++;
  } while (continuation !== undefined);
  return out;
}

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
    fx.ctx.db.run('CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, messages_fts, instance)');
    for (const [i, seq] of made.entries()) {
      const indexed = fx.ctx.db.all<{ term: string }>('SELECT term FROM temp.fts_instances WHERE doc = ? ORDER BY offset', [seq]).map((r) => r.term);
      expect(relevanceTokens(texts[i] as string)).toEqual(indexed);
    }
    // So a message holding the word twice, in any case or accent, ranks above one holding it once.
    const once = await post('resume of the plan, then other words');
    const twice = await post('Résumé of the plan: RESUME it');
    expect(seqs(await search(fx.ctx, { as: sam, query: 'résumé' }))).toEqual([twice, once]);
  });
});

async function post(content: string): Promise<number> {
  return (await send(fx.ctx, { as: sam, channel: 'chat', content })).seq;
}
