/**
 * What the text-search test files share (text-search-windows, -tokens,
 * -merge, -hostile, split apart by where each runs:
 * test/postgres/not-on-postgres.ts): a bus with Sam and the ordinary channel
 * `chat`, fresh for every test, the ways those files fill it and page
 * through it, and the index's own tokens of a message.
 */
import { afterEach, beforeEach } from 'vitest';
import { search } from '../../src/bus/search.js';
import { send } from '../../src/bus/send.js';
import { busFixture, channel, registerAs, type Fixture } from '../support/bus.js';

export type Page = Awaited<ReturnType<typeof search>>;

/** The seqs of a page's results, in order. */
export const seqs = (r: Page): number[] => r.results.map((x) => x.seq);

export interface TextSearchBus {
  /** The current test's bus. */
  readonly fx: Fixture;
  /** Sam's display name, registered on it. */
  readonly sam: string;
  /** Many messages quickly: one transaction of plain inserts (the index's triggers see them as send's); their seqs. */
  bulk(contents: readonly string[]): number[];
  /** One message from Sam on `chat` through send; its seq. */
  post(content: string): Promise<number>;
  /** The text index's own tokens of a message, in order: FTS5's (fts5vocab) or the tsvector's lexemes by position. */
  indexedTokens(seq: number): string[];
  /** Every page of a search, following its continuation to the end. */
  allPages(input: Record<string, unknown>): Promise<{ seqs: number[]; scores: number[]; pages: number }>;
}

/** Registers the bus's set-up and tear-down for every test of the calling file. */
export function useTextSearchBus(): TextSearchBus {
  let fx: Fixture | undefined;
  let sam = '';
  beforeEach(async () => {
    fx = await busFixture();
    sam = registerAs(fx.ctx, 'Sam');
    channel(fx.ctx, sam, 'chat', 'ordinary');
  });
  afterEach(async () => {
    await fx?.close();
  });
  const current = (): Fixture => fx as Fixture;
  return {
    get fx() {
      return current();
    },
    get sam() {
      return sam;
    },
    bulk(contents) {
      const { ctx, clock } = current();
      return ctx.db.transaction(() =>
        contents.map(
          (content) =>
            Number(
              ctx.db.get<{ seq: number }>(
                "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('chat', ?, 'test', ?, 'message', ?, ?) RETURNING seq",
                [sam, clock.now(), content, content.length],
              )!.seq,
            ),
        ),
      );
    },
    async post(content) {
      return (await send(current().ctx, { as: sam, channel: 'chat', content })).seq;
    },
    indexedTokens(seq) {
      const { db } = current().ctx;
      if (db.capabilities.fullText === 'tsvector') {
        const sql = 'SELECT t.lexeme AS term FROM messages m, unnest(m.content_tsv) AS t, unnest(t.positions) AS p(pos) WHERE m.seq = ? ORDER BY p.pos';
        return db.all<{ term: string }>(sql, [seq]).map((r) => r.term);
      }
      db.run('CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instances USING fts5vocab(main, messages_fts, instance)');
      return db.all<{ term: string }>('SELECT term FROM temp.fts_instances WHERE doc = ? ORDER BY offset', [seq]).map((r) => r.term);
    },
    async allPages(input) {
      const out = { seqs: [] as number[], scores: [] as number[], pages: 0 };
      let continuation: string | undefined;
      do {
        const page = await search(current().ctx, { as: sam, ...input, ...(continuation ? { continuation } : {}) });
        out.seqs.push(...seqs(page));
        out.scores.push(...page.results.map((r) => r.score));
        continuation = page.continuation ?? undefined;
        out.pages++;
      } while (continuation !== undefined);
      return out;
    },
  };
}
