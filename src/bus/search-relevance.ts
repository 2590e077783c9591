/**
 * Text relevance computed in JavaScript over the messages FTS5 matched: BM25
 * (k1 1.2, b 0.75, FTS5's own defaults) with each term's document frequency
 * estimated over the newest messages instead of the whole index.
 *
 * Why not FTS5's bm25(): it counts every row holding each phrase once per
 * query (a walk of the whole doclist), so a word in half of a million
 * messages costs tens of milliseconds before the first row, whatever LIMIT
 * says. Which rows match stays FTS5's decision; only the order is ours, so
 * the tokenizer here need only approximate unicode61 (remove_diacritics 2):
 * letters, digits and private-use characters, case-folded, and the marks
 * removed from Latin letters only, as unicode61 does (a Greek tonos stays).
 * The test of the ranking rules compares these tokens with the index's;
 * PostgreSQL's index is made by this rule itself (sql/postgres/0014).
 */
import type { SearchTerm } from './search-query.js';

const K1 = 1.2;
const B = 0.75;
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
// A Latin letter and the marks on it: unicode61 strips those, and keeps marks on other scripts' letters.
const LATIN_MARKS = /(\p{Script=Latin})\p{M}+/gu;
// Most messages are ASCII: no diacritics to strip, and a plain class finds the same words faster.
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_TOKEN = /[a-z0-9]+/g;

/** `text` with the marks on Latin letters removed (`é` to `e`, a Greek tonos kept), as unicode61 removes them; case kept. */
export function withoutLatinMarks(text: string): string {
  return ASCII.test(text) ? text : text.normalize('NFD').replace(LATIN_MARKS, '$1').normalize('NFC');
}

/** The words of `text` as the ranking compares them: case-folded, diacritics removed. */
export function relevanceTokens(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  return withoutLatinMarks(text).toLowerCase().match(TOKEN) ?? [];
}

/** One query term as tokens; `prefix` when its last token may be the start of a longer word. */
export interface TermPattern {
  /** The term's words, in order. */
  readonly tokens: readonly string[];
  /** True for a bare word written with a trailing `*`. */
  readonly prefix: boolean;
}

export function termPatterns(terms: readonly SearchTerm[]): TermPattern[] {
  return terms.map((t) => ({ tokens: relevanceTokens(t.text), prefix: t.prefix }));
}

/** How often the term occurs in `tokens` (a phrase counts where all its words follow each other). */
export function termFrequency(tokens: readonly string[], term: TermPattern): number {
  const n = term.tokens.length;
  if (n === 0) return 0;
  let count = 0;
  for (let i = 0; i + n <= tokens.length; i++) {
    let hit = true;
    for (let j = 0; j < n && hit; j++) {
      const token = tokens[i + j] as string;
      const wanted = term.tokens[j] as string;
      hit = term.prefix && j === n - 1 ? token.startsWith(wanted) : token === wanted;
    }
    if (hit) count++;
  }
  return count;
}

/** BM25 inverse document frequency of a term found in `withTerm` of `total` documents (FTS5's form, never negative). */
export function inverseDocumentFrequency(withTerm: number, total: number): number {
  return Math.log(1 + (Math.max(total, withTerm) - withTerm + 0.5) / (withTerm + 0.5));
}

/** A document to score: its seq and content. */
export interface ScoredInput {
  /** The message row. */
  readonly seq: number;
  /** Its text. */
  readonly content: string;
}

/**
 * BM25 of each document for the terms, higher is better, in input order.
 * `idf` has one weight per term; the average length is the documents' own.
 */
export function bm25Scores(docs: readonly ScoredInput[], terms: readonly TermPattern[], idf: readonly number[]): number[] {
  const tokenized = docs.map((d) => relevanceTokens(d.content));
  const average = tokenized.reduce((sum, t) => sum + t.length, 0) / Math.max(1, tokenized.length) || 1;
  return tokenized.map((tokens) => {
    let score = 0;
    terms.forEach((term, i) => {
      const tf = termFrequency(tokens, term);
      if (tf > 0) score += ((idf[i] ?? 1) * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * tokens.length) / average));
    });
    return score;
  });
}
