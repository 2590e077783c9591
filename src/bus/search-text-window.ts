/**
 * Text ranking in windows of the newest matches, so a search costs the same
 * whether a word is in ten messages or in half a million.
 *
 * The ranking a search pages through: the newest TEXT_WINDOW matches (after
 * the filters) ordered by relevance (search-relevance.ts), ties to the newer
 * message; then the next TEXT_WINDOW older matches, by relevance; and so on.
 * A window is named by its bound: every match below that seq belongs to it or
 * an older window, so a continuation that carries the bound reads the same
 * window again even when newer messages arrived in between.
 *
 * Matches are found by walking seq ranges downwards from the bound
 * (`rowid >= lo AND rowid < hi`, which FTS5 seeks to through its doclist
 * index, in its natural ascending order: descending order would make it load
 * every term's whole doclist), each range sized from the density of matches
 * in the ranges read so far. A query with a prefix term is the exception:
 * FTS5 expands the prefix over the whole index in every statement, so its
 * window is read in one, newest first with a LIMIT (newestMatches). So is
 * every query on PostgreSQL's tsvector, whose GIN index has no seq order.
 */
import type { DriverCapabilities, SqlValue } from '../db/contract/driver.js';
import type { Ranked } from '../embeddings/ranking.js';
import { byScoreThenNewer } from '../embeddings/ranking.js';
import type { BusContext } from './bus-context.js';
import { bm25Scores, inverseDocumentFrequency, termPatterns, withoutLatinMarks, type ScoredInput } from './search-relevance.js';
import { SEARCH_WORDS, termExpression, type SearchTerm } from './search-query.js';
import { invalid } from './validate.js';

/** Matches ranked together: relevance decides within a window, recency between windows. */
export const TEXT_WINDOW = 500;
/** Term weights (IDF) are estimated over this many of the newest seqs below the window's bound. */
export const IDF_SAMPLE_SEQS = 10_000;
/** A range read after an empty one is at most this many times longer. */
const MAX_RANGE_GROWTH = 16;

/** SQL conditions over `messages m`, each starting with AND, and their parameters. */
export interface FilterClause {
  /** Conditions, each starting with ` AND `. */
  readonly where: string;
  /** Their parameters in order. */
  readonly params: readonly SqlValue[];
}

/** One window of the ranking. */
export interface TextWindow {
  /** The window's matches, best first. */
  readonly ranked: Ranked[];
  /** The bound of the next (older) window; undefined when this is the oldest. */
  readonly next: number | undefined;
}

/**
 * How each full-text engine (capabilities.fullText) finds the messages
 * holding every term in a seq range, and counts them; `match` is the one
 * parameter both take. Ranking is the same for both (search-relevance.ts).
 * FTS5: the phrases quoted (search-query.ts), in the external-content table.
 * tsvector: the generated column of sql/postgres/0014, whose lexemes are
 * unicode61's tokens (relevanceTokens' rule); each phrase's words, the marks
 * on Latin letters removed as there, joined by `<->` (next to each other), a
 * prefix as `:*`, the phrases by `&`, and lower-cased by the index's own
 * lower() (agentbus_search_query), so query and index agree in any locale.
 * Words are runs of letters and digits (as search-query.ts reads them), so
 * quoting them in a tsquery never needs an escape.
 */
interface TextEngine {
  /** The FROM clause joining the index to `messages m`. */
  readonly from: string;
  /** The match over a seq range: parameters match, lo, hi. */
  readonly where: string;
  /** The count of matches in a seq range: parameters match, lo, hi. */
  readonly count: string;
  /** The ORDER BY that reads matches newest first. */
  readonly newestFirst: string;
  /** Whether walking seq ranges (matchesInRanges) beats one newest-first statement for terms without a prefix. */
  readonly walksRanges: boolean;
  /** The engine's query for `terms` (all must match). */
  match(terms: readonly SearchTerm[]): string;
}

const TEXT_MATCH: Readonly<Record<DriverCapabilities['fullText'], TextEngine>> = {
  fts5: {
    from: 'messages_fts CROSS JOIN messages m ON m.seq = messages_fts.rowid',
    where: 'messages_fts MATCH ? AND messages_fts.rowid >= ? AND messages_fts.rowid < ?',
    count: 'SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH ? AND rowid >= ? AND rowid < ?',
    // FTS5 walks its doclists in rowid order: ordering by the table's rowid lets it stop at LIMIT.
    newestFirst: 'messages_fts.rowid DESC',
    walksRanges: true,
    match: (terms) => terms.map(termExpression).join(' '),
  },
  tsvector: {
    from: 'messages m',
    where: 'm.content_tsv @@ agentbus_search_query(?) AND m.seq >= ? AND m.seq < ?',
    count: 'SELECT count(*)::int AS n FROM messages m WHERE m.content_tsv @@ agentbus_search_query(?) AND m.seq >= ? AND m.seq < ?',
    newestFirst: 'm.seq DESC',
    // A GIN index has no seq order to seek in: each range statement reads every match of the
    // whole index again, so one statement newest first with a LIMIT is the cheaper way
    // (text search at 100k messages p50 21 ms against 29, docs/performance.md).
    walksRanges: false,
    match: (terms) => terms.map(tsqueryPhrase).join(' & '),
  },
};

/** A lexeme's limit in bytes: the index leaves longer words out (sql/postgres/0014), and a tsquery refuses them. */
const MAX_LEXEME_BYTES = 2047;

/** One term as a tsquery phrase; throws `validation` on `query` for a word the index cannot hold. */
function tsqueryPhrase(term: SearchTerm): string {
  const words = withoutLatinMarks(term.text).match(SEARCH_WORDS) ?? [];
  const long = words.find((w) => Buffer.byteLength(w) > MAX_LEXEME_BYTES);
  if (long !== undefined) {
    throw invalid('query', `has a word of ${Buffer.byteLength(long)} bytes; the text index holds words up to ${MAX_LEXEME_BYTES} bytes, so search for other words of the message`);
  }
  return `(${words.map((w) => `'${w}'`).join(' <-> ')}${term.prefix ? ':*' : ''})`;
}

/** The seq above every message: the bound of the newest window. */
export function newestBound(ctx: BusContext): number {
  return (ctx.db.get<{ s: number | null }>('SELECT max(seq) AS s FROM messages')?.s ?? 0) + 1;
}

/** The window of matches of `terms` (all must appear) below seq `bound`, ranked. */
export function textWindow(ctx: BusContext, terms: readonly SearchTerm[], f: FilterClause, bound: number, size = TEXT_WINDOW): TextWindow {
  const text = TEXT_MATCH[ctx.db.capabilities.fullText];
  const match = text.match(terms);
  const found = !text.walksRanges || terms.some((t) => t.prefix) ? newestMatches(ctx, match, f, bound, size) : matchesInRanges(ctx, match, f, bound, size);
  const window = found.slice(0, size);
  const patterns = termPatterns(terms);
  const scores = bm25Scores(window, patterns, termWeights(ctx, terms, bound));
  const ranked = window.map((d, i) => ({ seq: d.seq, score: scores[i] as number })).sort(byScoreThenNewer);
  const oldest = window.at(-1);
  return { ranked, next: found.length >= size && oldest !== undefined && oldest.seq > 1 ? oldest.seq : undefined };
}

/** The matching messages of a seq range [?, ?) for `match`, in the engine's own terms. */
function matches(ctx: BusContext): string {
  const text = TEXT_MATCH[ctx.db.capabilities.fullText];
  return `SELECT m.seq AS seq, m.content AS content FROM ${text.from} WHERE ${text.where} AND m.tombstone = 0`;
}

/**
 * The newest `size` matches below `bound` in one statement, newest first.
 * For a query with a prefix term: FTS5 expands a prefix over the whole index
 * in every statement whatever its rowid range (7 ms native, about 40 wasm,
 * at a million messages), so one statement beats walking ranges.
 */
function newestMatches(ctx: BusContext, match: string, f: FilterClause, bound: number, size: number): ScoredInput[] {
  const order = TEXT_MATCH[ctx.db.capabilities.fullText].newestFirst;
  return ctx.db.all<ScoredInput>(`${matches(ctx)}${f.where} ORDER BY ${order} ${ctx.db.capabilities.dialect.limit}`, [match, 0, bound, ...f.params, size]);
}

/** The newest `size` matches below `bound` (or all when fewer), newest first, read in seq ranges walking down (module comment). */
function matchesInRanges(ctx: BusContext, match: string, f: FilterClause, bound: number, size: number): ScoredInput[] {
  const sql = matches(ctx);
  const found: ScoredInput[] = [];
  let hi = bound;
  let span = size;
  let scanned = 0;
  while (found.length < size && hi > 0) {
    const lo = Math.max(0, hi - span);
    const rows = ctx.db.all<ScoredInput>(`${sql}${f.where}`, [match, lo, hi, ...f.params]);
    for (let i = rows.length - 1; i >= 0; i--) found.push(rows[i] as ScoredInput);
    scanned += hi - lo;
    hi = lo;
    const density = found.length / scanned;
    const wanted = density > 0 ? Math.ceil(((size - found.length) / density) * 1.25) : Infinity;
    span = Math.max(size, Math.min(span * MAX_RANGE_GROWTH, wanted));
  }
  return found;
}

/**
 * One IDF per term from the newest IDF_SAMPLE_SEQS seqs below `bound`. A
 * single term needs none: every match holds it, so its weight orders nothing.
 */
function termWeights(ctx: BusContext, terms: readonly SearchTerm[], bound: number): number[] {
  if (terms.length < 2) return terms.map(() => 1);
  const lo = Math.max(0, bound - IDF_SAMPLE_SEQS);
  const text = TEXT_MATCH[ctx.db.capabilities.fullText];
  return terms.map((term) => {
    const n = ctx.db.get<{ n: number }>(text.count, [text.match([term]), lo, bound])?.n ?? 0;
    return inverseDocumentFrequency(n, bound - lo);
  });
}
