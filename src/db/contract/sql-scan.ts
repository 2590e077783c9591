/**
 * Reading SQL text the way SQLite's tokenizer does, for the two facts the
 * drivers need before or beside SQLite: which parameters a statement has, and
 * whether the text left after one statement holds another. Only comments,
 * quoted strings and identifiers, and parameter tokens matter here; the
 * rest of the grammar is SQLite's business.
 */
import { DbError } from './db-error.js';

/**
 * The parameters of one statement's text, as SQLite numbers them: the highest
 * index (sqlite3_bind_parameter_count) and the name of each index that has
 * one (sqlite3_bind_parameter_name: `:a`, `@a`, `$a`, `#a` or `?NNN`; a bare
 * `?` has none).
 */
export interface ScannedParameters {
  readonly count: number;
  readonly names: ReadonlyMap<number, string>;
}

const enum Ch {
  Tab = 9,
  Newline = 10,
  FormFeed = 12,
  Return = 13,
  Space = 32,
  Quote = 39, // '
  DoubleQuote = 34,
  Hash = 35,
  Dollar = 36,
  ParenOpen = 40,
  ParenClose = 41,
  Star = 42,
  Minus = 45,
  Slash = 47,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  Semicolon = 59,
  Question = 63,
  At = 64,
  BracketOpen = 91,
  BracketClose = 93,
  Backtick = 96,
}

function isSpace(c: number): boolean {
  return c === Ch.Space || c === Ch.Tab || c === Ch.Newline || c === Ch.FormFeed || c === Ch.Return;
}

function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine;
}

/** SQLite's IdChar: letters, digits, `_`, `$`, and every non-ASCII character. */
function isIdChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c) || c === 95 || c === Ch.Dollar || c >= 0x80;
}

/** If a comment starts at `i`, the index just past it; otherwise `i`. */
function skipComment(sql: string, i: number): number {
  const c = sql.charCodeAt(i);
  const next = sql.charCodeAt(i + 1);
  if (c === Ch.Minus && next === Ch.Minus) {
    const end = sql.indexOf('\n', i + 2);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === Ch.Slash && next === Ch.Star) {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  return i;
}

/** The index past the whitespace, comments and empty statements (`;`) from `from` on. */
export function skipBlank(sql: string, from = 0): number {
  let i = from;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (isSpace(c) || c === Ch.Semicolon) {
      i++;
      continue;
    }
    const after = skipComment(sql, i);
    if (after === i) return i;
    i = after;
  }
  return i;
}

/** True when the text holds no statement: only whitespace, comments and semicolons. */
export function isBlankSql(sql: string): boolean {
  return skipBlank(sql) === sql.length;
}

/** The DbError (`statement_count`) for prepare() text that holds no statement. */
export function noStatement(): DbError {
  return new DbError('statement_count', 'prepare() needs one SQL statement; the text has none (only whitespace, comments or ";")');
}

/** The DbError (`statement_count`) for prepare() text with more after its first statement; `tail` is that rest. */
export function secondStatement(tail: string): DbError {
  const rest = tail.slice(skipBlank(tail)).replace(/\s+/g, ' ');
  const shown = rest.length > 40 ? `${rest.slice(0, 40)}...` : rest;
  return new DbError(
    'statement_count',
    `prepare() compiles one statement, but the text goes on after the first ("${shown}"): prepare each statement on its own, or run them with exec()`,
  );
}

/** The index past a quoted string or identifier opened at `i` (a doubled closing quote is an escape). */
function skipQuoted(sql: string, i: number, close: number): number {
  let j = i + 1;
  for (;;) {
    const end = sql.indexOf(String.fromCharCode(close), j);
    if (end < 0) return sql.length;
    if (close !== Ch.BracketClose && sql.charCodeAt(end + 1) === close) {
      j = end + 2;
      continue;
    }
    return end + 1;
  }
}

/**
 * The index past a named parameter token whose prefix is at `i`, as SQLite
 * reads it: identifier characters, with Tcl's `::` and a `(...)` suffix.
 */
function skipNamed(sql: string, i: number): number {
  let j = i + 1;
  let n = 0;
  while (j < sql.length) {
    const c = sql.charCodeAt(j);
    if (isIdChar(c)) {
      n++;
      j++;
    } else if (c === Ch.ParenOpen && n > 0) {
      j++;
      while (j < sql.length && !isSpace(sql.charCodeAt(j)) && sql.charCodeAt(j) !== Ch.ParenClose) j++;
      if (sql.charCodeAt(j) === Ch.ParenClose) j++;
      break;
    } else if (c === Ch.Colon && sql.charCodeAt(j + 1) === Ch.Colon) {
      j += 2;
    } else {
      break;
    }
  }
  return n === 0 ? i + 1 : j;
}

/** The characters a parameter token starts with; text without them has none. */
const PARAMETER_PREFIX = /[?:@$#]/;

/**
 * The strings, quoted identifiers and comments that scanParameters skips, an
 * unclosed one running to the end. Only the `(...)` suffix of a named
 * parameter reads a quote or comment mark as anything else, and that
 * parameter's prefix stays outside what this removes.
 */
const QUOTED_OR_COMMENT = /'[^']*(?:'|$)|"[^"]*(?:"|$)|`[^`]*(?:`|$)|\[[^\]]*(?:\]|$)|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g;

/**
 * Throws the DbError (`bind`) for exec() text that has a parameter, which
 * sqlite3_exec would run as NULL. Most exec() text is schema, long and
 * without one: one regular-expression pass over it settles that, where the
 * character loop of scanParameters would run long enough for V8 to compile it
 * with its optimising tier at start-up, and that compiler's code pages stay
 * resident in an idle server (docs/performance.md, issue 24's fifth round).
 */
export function assertNoParameter(sql: string): void {
  if (!PARAMETER_PREFIX.test(sql)) return;
  if (!PARAMETER_PREFIX.test(sql.replace(QUOTED_OR_COMMENT, ' '))) return;
  if (scanParameters(sql).count === 0) return;
  throw new DbError('bind', 'exec() binds no values but the SQL has a parameter: run that statement through prepare()');
}

/**
 * The parameters of one statement, numbered as SQLite numbers them: a bare
 * `?` takes the next index, `?NNN` takes NNN, and a name takes the index of
 * its first use or else the next one. Over several statements the numbering
 * runs on, which still tells whether any of them has a parameter.
 */
export function scanParameters(sql: string): ScannedParameters {
  const names = new Map<number, string>();
  const byName = new Map<string, number>();
  let count = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (c === Ch.Quote || c === Ch.DoubleQuote || c === Ch.Backtick) {
      i = skipQuoted(sql, i, c);
    } else if (c === Ch.BracketOpen) {
      i = skipQuoted(sql, i, Ch.BracketClose);
    } else if (c === Ch.Minus || c === Ch.Slash) {
      const after = skipComment(sql, i);
      i = after === i ? i + 1 : after;
    } else if (c === Ch.Question) {
      let j = i + 1;
      while (isDigit(sql.charCodeAt(j))) j++;
      if (j === i + 1) {
        count++;
      } else {
        const index = Number(sql.slice(i + 1, j));
        count = Math.max(count, index);
        // An index keeps the first name it was given.
        if (!names.has(index)) names.set(index, sql.slice(i, j));
      }
      i = j;
    } else if (c === Ch.Colon || c === Ch.At || c === Ch.Dollar || c === Ch.Hash) {
      const j = skipNamed(sql, i);
      if (j > i + 1) {
        const name = sql.slice(i, j);
        if (!byName.has(name)) {
          const index = ++count;
          byName.set(name, index);
          names.set(index, name);
        }
      }
      i = j;
    } else if (isIdChar(c)) {
      // A word or number: a `$` or digit inside it never starts a parameter.
      i++;
      while (i < sql.length && isIdChar(sql.charCodeAt(i))) i++;
    } else {
      i++;
    }
  }
  return { count, names };
}
