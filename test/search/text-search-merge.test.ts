/**
 * Text ranking windows across the tick's merge of FTS5 index segments (split from text-search-windows.test.ts: SQLite file only, test/postgres/not-on-postgres.ts).
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
  it('returns the same results before and after the tick merges the index segments', async () => {
    // Small transactions with automerge off (migration 0002) leave one segment each.
    for (let i = 0; i < 40; i++) bulk(Array.from({ length: 30 }, (_, j) => `plum ${j % 3 === 0 ? 'cherry ' : ''}batch ${i} row ${j}`));
    const queries = [{ query: 'plum', count: 300 }, { query: 'plum cherry', count: 100 }, { query: '"plum cherry"', count: 100 }, { query: 'batch*', count: 500 }];
    const before = [];
    for (const q of queries) before.push(await allPages(q));
    const state = initialChunkState();
    const report = emptyStep('fts_merge');
    while (mergeFtsOnce(fx.ctx.db, 'all', state, report));
    expect(report.ftsMerges).toBeGreaterThan(1);
    for (const [i, q] of queries.entries()) expect(await allPages(q)).toEqual(before[i]);
  });
});

async function post(content: string): Promise<number> {
  return (await send(fx.ctx, { as: sam, channel: 'chat', content })).seq;
}
