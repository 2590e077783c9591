/**
 * Turning a user's search text into an FTS5 MATCH expression that can never
 * be a syntax error. FTS5's query language (quotes, `*`, `AND`/`OR`/`NOT`,
 * `NEAR`, parentheses, `column:` filters, `^`) is not exposed: every word
 * becomes a quoted phrase, so operators are just words. What is kept:
 * all words must appear (AND), a "quoted phrase" must appear as written,
 * and a trailing `*` on a bare word matches any word with that prefix.
 */
import { invalid } from './validate.js';

/** More phrases than this make a slow query and are almost certainly pasted text. */
export const MAX_QUERY_TERMS = 64;

// The unicode61 tokenizer splits on everything that is not a letter, number or private-use character.
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}]/u;
/** The words of a phrase as that tokenizer reads them: runs of those characters. */
export const SEARCH_WORDS = /[\p{L}\p{N}\p{Co}]+/gu;

/** A phrase FTS5 will look for: its text, and whether its last word is a prefix. */
export interface SearchTerm {
  /** The words of the phrase, as the user wrote them (FTS5 tokenizes inside the quotes). */
  readonly text: string;
  /** True for a bare word that ended in `*`. */
  readonly prefix: boolean;
}

/** The terms of a query: quoted phrases and bare words that contain at least one searchable character. */
export function searchTerms(query: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  for (const match of query.matchAll(/"([^"]*)"|([^\s"]+)/gu)) {
    const quoted = match[1];
    if (quoted !== undefined) {
      if (TOKEN_CHAR.test(quoted)) terms.push({ text: quoted, prefix: false });
      continue;
    }
    const word = match[2] ?? '';
    const stem = word.replace(/\*+$/u, '');
    if (TOKEN_CHAR.test(stem)) terms.push({ text: stem, prefix: stem.length < word.length });
  }
  return terms;
}

/**
 * The MATCH expression for `query`. Throws `validation` on `query` when no
 * word can be searched (only punctuation or operators) or there are too many.
 */
export function ftsMatchExpression(query: string): string {
  const terms = searchTerms(query);
  if (terms.length === 0) {
    throw invalid('query', 'has no words to search for: text search matches words of letters or digits, and punctuation or operators alone match nothing');
  }
  if (terms.length > MAX_QUERY_TERMS) {
    throw invalid('query', `has ${terms.length} words; use at most ${MAX_QUERY_TERMS} (every word must appear, so fewer, more specific words find more)`);
  }
  return terms.map(termExpression).join(' ');
}

/** One term as an FTS5 phrase: quoted, inner quotes doubled, `*` after a prefix. */
export function termExpression(term: SearchTerm): string {
  return `"${term.text.replaceAll('"', '""')}"${term.prefix ? '*' : ''}`;
}

