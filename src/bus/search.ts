/**
 * search: full-text (FTS5 matches ranked by BM25 within windows of the newest
 * matches, search-text-window.ts), semantic (cosine over memory vectors) or
 * both (reciprocal rank fusion), with filters and paging.
 *
 * - Text search covers every stored message; semantic search covers live
 *   memory revisions that have a vector for the configured model. Tombstoned
 *   revisions never appear in either.
 * - `mode` defaults to `both` when embeddings are configured, else `text`.
 *   When the query cannot be embedded (no endpoint, endpoint down or
 *   answering garbage) the search runs as text and the result carries a
 *   `semantic_unavailable` notice: a search never fails because of the
 *   embeddings endpoint.
 * - Filters: `channel`, `sender`, `since` (inclusive) and `until` (exclusive)
 *   as ISO 8601 times, and `thread`: the message with that seq plus every
 *   message whose reply_to chain leads to it.
 * - Paging: `count` (default 100, at most 1000) and a result byte ceiling
 *   (`result_default_kib`, whole records); `continuation` is a position in
 *   the ranking, which each page recomputes: text pages keep the window bound,
 *   so messages sent between pages do not shift them; semantic and `both`
 *   offsets are consistent as long as the memories do not change.
 */
import * as v from 'valibot';
import type { SqlValue } from '../db/contract/driver.js';
import { isEmbeddingError } from '../embeddings/embedding-error.js';
import { createEmbeddingsClient, embeddingSettings, QUERY_TIMEOUT_MS } from '../embeddings/embeddings-client.js';
import { storedDimensions } from '../embeddings/embedding-pass.js';
import { byScoreThenNewer, type Ranked } from '../embeddings/ranking.js';
import { reciprocalRankFusion } from '../embeddings/reciprocal-rank-fusion.js';
import { vectorCacheFor, type StoredVector } from '../embeddings/vector-cache.js';
import { decodeVector, dot } from '../embeddings/vector-codec.js';
import type { BusContext } from './bus-context.js';
import { requireChannel } from './channels.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { directVisibleTo } from './direct-recipients.js';
import { SeqField } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { fitToCeiling, MESSAGE_COLUMNS, MessageOutput, toMessage, type Message, type MessageRow } from './message-row.js';
import { ChannelNameField, DisplayNameField } from './names.js';
import { NoticeOutput, type Notice } from './notice.js';
import { decodeContinuation, encodeContinuation, searchFingerprint, type SearchPosition } from './search-continuation.js';
import { liveMemorySeqs } from './live-memories.js';
import { ftsMatchExpression, searchTerms, type SearchTerm } from './search-query.js';
import { newestBound, textWindow, type FilterClause } from './search-text-window.js';
import { invalid, parseInput } from './validate.js';

export const SEARCH_MODES = ['text', 'semantic', 'both'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
export const SEARCH_DEFAULT_COUNT = 100;
export const SEARCH_MAX_COUNT = 1000;
export const QUERY_MAX_CHARS = 4096;
/** Vectors read per statement when filling the cache. */
const VECTOR_LOAD_CHUNK = 5_000;
/** Semantic candidates the int8 vectors re-rank, at least: the nearest by one-bit codes (recall@10 0.995 at 100k x 768 with 2,000 as with 4,000: docs/performance.md). */
export const BINARY_CANDIDATES = 2_000;
/** Semantic candidates re-ranked with their exact stored vectors, at least. */
export const RERANK_CANDIDATES = 200;
/** Cached vectors beyond the live candidates tolerated before the cache is pruned. */
const PRUNE_SLACK = 1_024;

const Timestamp = (what: string) =>
  v.pipe(
    v.string(`must be an ISO 8601 time string such as 2026-11-30T12:00:00Z (${what})`),
    v.isoTimestamp(`must be an ISO 8601 time with date, time and zone, such as 2026-11-30T12:00:00Z (${what})`),
  );

export const SearchInput = v.strictObject({
  as: AsField,
  query: v.pipe(
    v.string('must be a string: the words to look for'),
    v.minLength(1, 'must not be empty: give the words to look for'),
    v.maxLength(QUERY_MAX_CHARS, `must be at most ${QUERY_MAX_CHARS} characters`),
    v.description(`The words to look for, matched as plain words (at most ${QUERY_MAX_CHARS} characters).`),
  ),
  mode: v.optional(
    v.pipe(
      v.picklist(SEARCH_MODES, 'must be "text" (words), "semantic" (meaning, memories only) or "both"; omit it for the default'),
      v.description('"text" (words), "semantic" (meaning; memory channels only) or "both". Default: "both" when embeddings are configured, else "text".'),
    ),
  ),
  channel: v.optional(v.pipe(ChannelNameField, v.description('Only this channel.'))),
  sender: v.optional(v.pipe(DisplayNameField, v.description('Only messages from this display_name.'))),
  since: v.optional(v.pipe(Timestamp('messages created at or after it'), v.description('Only messages created at or after this ISO 8601 time, e.g. 2026-11-30T12:00:00Z.'))),
  until: v.optional(v.pipe(Timestamp('messages created before it'), v.description('Only messages created before this ISO 8601 time.'))),
  thread: v.optional(v.pipe(SeqField, v.description('Only the message with this seq and every message whose reply_to chain leads to it.'))),
  direct: v.optional(v.pipe(v.boolean('must be true or false'), v.description('true: only direct messages (to or from you); they are on no channel, so not with channel.'))),
  count: v.optional(
    v.pipe(
      v.number('must be a number of results'),
      v.integer('must be a whole number of results'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(SEARCH_MAX_COUNT, `must be at most ${SEARCH_MAX_COUNT}; page with continuation for more`),
      v.description(`Results per page (default ${SEARCH_DEFAULT_COUNT}, at most ${SEARCH_MAX_COUNT}).`),
    ),
    SEARCH_DEFAULT_COUNT,
  ),
  continuation: v.optional(
    v.pipe(
      v.string('must be the continuation string of the previous page'),
      v.minLength(1, 'must not be empty; omit it for the first page'),
      v.maxLength(512, 'is not a continuation a search returned'),
      v.description('The continuation of the previous page, with the same query and filters; omit it for the first page.'),
    ),
  ),
});
export type SearchInput = v.InferInput<typeof SearchInput>;

export const SearchResultOutput = v.object({
  ...MessageOutput.entries,
  /** Higher is better. text: bm25 relevance; semantic: cosine similarity; both: fused reciprocal-rank score. */
  score: v.number(),
});
export type SearchHit = v.InferOutput<typeof SearchResultOutput>;


export const SearchOutput = v.object({
  /** Best first. */
  results: v.array(SearchResultOutput),
  /** Pass it back with the same query and filters for the next page; null when there is none. */
  continuation: v.nullable(v.string()),
  /** The mode that ran: differs from the one asked for when semantic search was unavailable. */
  mode: v.picklist(SEARCH_MODES),
  notices: v.array(NoticeOutput),
});
export type SearchResult = v.InferOutput<typeof SearchOutput>;

interface Filters {
  /** Only this channel (known to exist). */
  readonly channel?: string | undefined;
  /** Only messages whose sender is this display name. */
  readonly sender?: string | undefined;
  /** created_at >= sinceMs. */
  readonly sinceMs?: number | undefined;
  /** created_at < untilMs; greater than sinceMs when both are set. */
  readonly untilMs?: number | undefined;
  /** Only this seq and the messages whose reply_to chain leads to it. */
  readonly thread?: number | undefined;
  /** Only direct messages. */
  readonly direct?: boolean | undefined;
  /** Direct messages only when this display name sent or is addressed by them; undefined (a person's reader) sees all. */
  readonly reader?: string | undefined;
}

/**
 * Searches messages and memories. Throws `validation` (bad input, a query
 * with no searchable words, a foreign continuation), `not_registered`,
 * `not_found` (unknown channel filter). Embeddings trouble is a notice, not an error.
 */
export async function search(ctx: BusContext, rawInput: unknown): Promise<SearchResult> {
  const input = parseInput(SearchInput, rawInput);
  return runSearch(ctx, input, () => requireSession(ctx, input.as), input.as);
}

/** The search's fields without `as`: what a reader that is not a session (the console) passes to runSearch. */
export const SearchQueryInput = v.omit(SearchInput, ['as']);
export type SearchQuery = v.InferOutput<typeof SearchQueryInput>;

/**
 * The same search for a reader that holds no session (the console): the same
 * validation, filters and ranking, without the `as` check.
 */
export async function searchAsReader(ctx: BusContext, rawInput: unknown): Promise<SearchResult> {
  return runSearch(ctx, parseInput(SearchQueryInput, rawInput), () => undefined);
}

/**
 * The search itself, for a validated query. `check` runs before the work and
 * again inside the read transaction (the MCP tool passes its session check;
 * the console, which reads without registering, passes a no-op). With
 * `reader`, direct messages show only to their sender and addressees.
 */
export async function runSearch(ctx: BusContext, input: SearchQuery, check: () => void, reader?: string): Promise<SearchResult> {
  check();
  const filters = { ...parseFilters(ctx, input), reader };
  const settings = embeddingSettings(ctx.config);
  const asked: SearchMode = input.mode ?? (settings === undefined ? 'text' : 'both');
  const fingerprint = searchFingerprint({
    query: input.query,
    mode: asked,
    channel: input.channel,
    sender: input.sender,
    since: filters.sinceMs,
    until: filters.untilMs,
    thread: input.thread,
    direct: input.direct,
  });
  const position: SearchPosition = input.continuation === undefined ? { offset: 0, bound: undefined } : decodeContinuation(input.continuation, fingerprint);
  // Checked before any request so a hopeless query fails fast; semantic alone needs no FTS words.
  let match = asked === 'semantic' ? undefined : ftsMatchExpression(input.query);
  if (asked === 'semantic' && input.query.trim() === '') throw invalid('query', 'is only whitespace; give the words to look for');

  const notices: Notice[] = [];
  let mode = asked;
  let queryVector: Float32Array | undefined;
  if (asked !== 'text') {
    const embedded = await embedQuery(ctx, input.query);
    if (embedded.ok) {
      queryVector = embedded.vector;
    } else {
      notices.push({ kind: 'semantic_unavailable', message: `${embedded.reason}; these are text search results` });
      mode = 'text';
      match ??= ftsMatchExpression(input.query);
    }
  }

  const model = settings?.embedding_model ?? '';
  return ctx.db.read(() => {
    check();
    const wanted = input.count + 1;
    const clause = filterSql(ctx, filters, filters.thread === undefined ? undefined : threadMembers(ctx, filters.thread));
    const terms = match === undefined ? [] : searchTerms(input.query);
    const page =
      mode === 'text' ? textPage(ctx, terms, clause, position, wanted) : rankedPage(ctx, mode, terms, clause, position, wanted, queryVector as Float32Array, model);
    const hits = loadHits(ctx, page.slice(0, input.count).map((p) => p.ranked));
    const fitted = fitToCeiling(hits, ctx.config.result_default_kib * 1024);
    const next = page[fitted.messages.length];
    ctx.log.debug('search', { mode, results: fitted.messages.length, offset: position.offset });
    return {
      results: fitted.messages as SearchHit[],
      continuation: next === undefined ? null : encodeContinuation(next.at, fingerprint),
      mode,
      notices,
    };
  });
}

/** The page of a semantic or combined search: the semantic ranking, fused with the text window when both. */
function rankedPage(
  ctx: BusContext,
  mode: 'semantic' | 'both',
  terms: ReturnType<typeof searchTerms>,
  clause: ReturnType<typeof filterSql>,
  position: SearchPosition,
  wanted: number,
  queryVector: Float32Array,
  model: string,
): Positioned[] {
  const bound = position.bound ?? (mode === 'both' ? newestBound(ctx) : undefined);
  const semantic = semanticRanking(ctx, queryVector, model, clause, position.offset + wanted);
  const ranking = mode === 'semantic' ? semantic : reciprocalRankFusion([textWindow(ctx, terms, clause, bound as number).ranked, semantic]);
  return ranking.slice(position.offset, position.offset + wanted).map((ranked, i) => ({ ranked, at: { offset: position.offset + i, bound } }));
}

/** A ranked result and the position it holds (what a continuation starting at it says). */
interface Positioned {
  /** The result. */
  readonly ranked: Ranked;
  /** Its position in the ranking. */
  readonly at: SearchPosition;
}

/** Up to `wanted` text results from `start` on, across as many windows as that takes. */
function textPage(ctx: BusContext, terms: readonly SearchTerm[], clause: FilterClause, start: SearchPosition, wanted: number): Positioned[] {
  const page: Positioned[] = [];
  let bound: number | undefined = start.bound ?? newestBound(ctx);
  let offset = start.offset;
  while (bound !== undefined && page.length < wanted) {
    const window = textWindow(ctx, terms, clause, bound);
    for (let i = offset; i < window.ranked.length && page.length < wanted; i++) {
      page.push({ ranked: window.ranked[i] as Ranked, at: { offset: i, bound } });
    }
    bound = window.next;
    offset = 0;
  }
  return page;
}

function parseFilters(ctx: BusContext, input: SearchQuery): Filters {
  const sinceMs = input.since === undefined ? undefined : Date.parse(input.since);
  const untilMs = input.until === undefined ? undefined : Date.parse(input.until);
  if (sinceMs !== undefined && Number.isNaN(sinceMs)) throw invalid('since', 'is not a real date and time; use e.g. 2026-11-30T12:00:00Z');
  if (untilMs !== undefined && Number.isNaN(untilMs)) throw invalid('until', 'is not a real date and time; use e.g. 2026-11-30T12:00:00Z');
  if (sinceMs !== undefined && untilMs !== undefined && untilMs <= sinceMs) {
    throw invalid('until', 'must be later than since; the range is since (inclusive) to until (exclusive)');
  }
  if (input.direct === true && input.channel !== undefined) throw invalid('direct', 'cannot be combined with channel: direct messages are on no channel; drop one of them');
  if (input.channel !== undefined) requireChannel(ctx, input.channel);
  return { channel: input.channel, sender: input.sender, sinceMs, untilMs, thread: input.thread, direct: input.direct };
}

type Embedded = { ok: true; vector: Float32Array } | { ok: false; reason: string };

async function embedQuery(ctx: BusContext, query: string): Promise<Embedded> {
  const settings = embeddingSettings(ctx.config);
  if (settings === undefined) {
    return { ok: false, reason: 'semantic search is not configured (no embedding_endpoint)' };
  }
  try {
    const client = createEmbeddingsClient(settings);
    const [vector] = await client.embed([query], {
      timeoutMs: QUERY_TIMEOUT_MS,
      expectedDimensions: storedDimensions(ctx.db, client.model),
    });
    return { ok: true, vector: vector as Float32Array };
  } catch (error) {
    if (!isEmbeddingError(error)) throw error;
    ctx.log.warn('search query could not be embedded; answering with text search', { kind: error.kind, status: error.status, reason: error.message });
    return { ok: false, reason: `semantic search is unavailable: ${error.message}` };
  }
}

/**
 * The seqs of a thread: `root` and every message whose reply_to chain leads
 * to it. One pass over the rows after the root in seq order (a reply always
 * has a higher seq than what it answers), rather than a recursive query that
 * would scan the table once per member: reply_to has no index.
 */
function threadMembers(ctx: BusContext, root: number): number[] {
  const members = new Set<number>([root]);
  const replies = ctx.db.all<{ seq: number; reply_to: number }>(
    'SELECT seq, reply_to FROM messages WHERE seq > ? AND reply_to >= ? ORDER BY seq',
    [root, root],
  );
  for (const r of replies) if (members.has(r.reply_to)) members.add(r.seq);
  return [...members];
}

/** SQL conditions (each starting with AND) over `messages m` for the filters, and their parameters. */
function filterSql(ctx: BusContext, filters: Filters, threadSeqs: readonly number[] | undefined): FilterClause {
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  if (filters.channel !== undefined) {
    conditions.push('m.channel = ?');
    params.push(filters.channel);
  }
  if (filters.sender !== undefined) {
    conditions.push('m.sender = ?');
    params.push(filters.sender);
  }
  if (filters.direct === true) {
    conditions.push('m.channel = ?');
    params.push(DIRECT_CHANNEL);
  }
  if (filters.sinceMs !== undefined) {
    conditions.push('m.created_at >= ?');
    params.push(filters.sinceMs);
  }
  if (filters.untilMs !== undefined) {
    conditions.push('m.created_at < ?');
    params.push(filters.untilMs);
  }
  if (filters.reader !== undefined) {
    const visible = directVisibleTo(filters.reader);
    conditions.push(visible.sql);
    params.push(...visible.params);
  }
  if (threadSeqs !== undefined) {
    conditions.push(`m.seq IN (${ctx.db.capabilities.dialect.jsonIntegers})`);
    params.push(JSON.stringify(threadSeqs));
  }
  return { where: conditions.map((c) => ` AND ${c}`).join(''), params };
}

/**
 * Live memory revisions nearest to `query`, best first, in three passes:
 * every live memory's one-bit-per-dimension code against the query's
 * (Hamming distance), the nearest BINARY_CANDIDATES of those by their int8
 * vectors, and the best max(RERANK_CANDIDATES, 2 x depth) of those by the
 * exact cosine of their stored vectors (vector-cache.ts). `depth` is how far
 * the caller reads.
 */
function semanticRanking(ctx: BusContext, query: Float32Array, model: string, f: FilterClause, depth: number): Ranked[] {
  const seqs = liveMemorySeqs(ctx, f);
  const cache = vectorCacheFor(ctx.db, model);
  // Not cached: never seen by this process, or not embedded yet (the backlog, probed again each query).
  const cached = cache.slotsOf(seqs);
  const missing = seqs.filter((_, i) => (cached[i] as number) < 0);
  for (let i = 0; i < missing.length; i += VECTOR_LOAD_CHUNK) cache.addAll(storedVectors(ctx, model, missing.slice(i, i + VECTOR_LOAD_CHUNK)));
  if (cache.size > seqs.length + PRUNE_SLACK) cache.pruneTo(new Set(seqs));
  const code = cache.queryCode(query);
  if (code === undefined) return [];
  const exact = Math.max(RERANK_CANDIDATES, 2 * depth);
  const slots = cache.slotsOf(seqs); // the same array again unless a vector was added or pruned above
  const approximate = cache
    .nearest(slots, code, Math.max(BINARY_CANDIDATES, 4 * exact))
    .map((i) => {
      const slot = slots[i] as number;
      return { seq: seqs[i] as number, score: slot < 0 ? Infinity : cache.approximateScoreAt(slot, query) };
    })
    .sort(byScoreThenNewer)
    .slice(0, exact);
  const ranked: Ranked[] = [];
  for (const row of storedVectors(ctx, model, approximate.map((r) => r.seq))) {
    if (row.vector.byteLength === query.length * 4) ranked.push({ seq: row.seq, score: dot(query, decodeVector(row.vector)) });
  }
  return ranked.sort(byScoreThenNewer);
}

function storedVectors(ctx: BusContext, model: string, seqs: readonly number[]): StoredVector[] {
  return ctx.db.all<StoredVector>(`SELECT seq, vector FROM embeddings WHERE model = ? AND seq IN (${ctx.db.capabilities.dialect.jsonIntegers})`, [
    model,
    JSON.stringify(seqs),
  ]);
}

function loadHits(ctx: BusContext, page: readonly Ranked[]): SearchHit[] {
  if (page.length === 0) return [];
  const rows = ctx.db.all<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.seq IN (${ctx.db.capabilities.dialect.jsonIntegers})`,
    [JSON.stringify(page.map((r) => r.seq))],
  );
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  const hits: SearchHit[] = [];
  for (const ranked of page) {
    const row = bySeq.get(ranked.seq);
    if (row !== undefined) hits.push({ ...(toMessage(row) as Message), score: ranked.score });
  }
  return hits;
}
