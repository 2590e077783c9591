/**
 * Core's SQL text as PostgreSQL reads it: core writes `?`, `?NNN` and
 * `:name` parameters (SQLite's), PostgreSQL numbers them `$1`, `$2`. This
 * scanner knows PostgreSQL's lexical rules that matter for finding them:
 * quoted strings ('', E'' with backslash escapes), quoted identifiers,
 * dollar-quoted bodies ($tag$ ... $tag$), comments, and `::` casts, which
 * are not parameters. It numbers parameters as SQLite does (a bare `?`
 * takes the next index, `?NNN` takes NNN, a name the index of its first
 * use), so the binding rules of StatementParameters apply unchanged.
 */
import { noStatement, secondStatement, isBlankSql } from '../../src/db/contract/sql-scan.js';

export interface PgText {
  /** The text with every parameter written `$index`, cut after the first statement. */
  readonly text: string;
  /** The highest parameter index. */
  readonly count: number;
  /** The token of each named index (`:name`, `?NNN`); a bare `?` has none. */
  readonly names: ReadonlyMap<number, string>;
  /** The text after the first top-level `;` (empty when there is none). */
  readonly rest: string;
}

const isIdStart = (c: string): boolean => /[A-Za-z_\u0080-\uffff]/.test(c);
const isIdChar = (c: string): boolean => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);

/** The index past a quoted run opened at `i` with `quote`; a doubled quote is an escape, and in E'' so is a backslash. */
function skipQuoted(sql: string, i: number, quote: string, backslash: boolean): number {
  let j = i + 1;
  while (j < sql.length) {
    const c = sql[j];
    if (backslash && c === '\\') {
      j += 2;
      continue;
    }
    if (c === quote) {
      if (sql[j + 1] === quote) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    j++;
  }
  return sql.length;
}

/** When a dollar quote opens at `i` ($$ or $tag$), the index past its close; otherwise undefined. */
function skipDollarQuoted(sql: string, i: number): number | undefined {
  const open = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64));
  if (open === null) return undefined;
  const end = sql.indexOf(open[0], i + open[0].length);
  return end < 0 ? sql.length : end + open[0].length;
}

/** The index past a comment that starts at `i`, or `i` when none does. */
function skipComment(sql: string, i: number): number {
  if (sql.startsWith('--', i)) {
    const end = sql.indexOf('\n', i + 2);
    return end < 0 ? sql.length : end + 1;
  }
  if (sql.startsWith('/*', i)) {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  return i;
}

/** Rewrites the parameters of `sql` and finds where its first statement ends. */
export function translate(sql: string): PgText {
  const names = new Map<number, string>();
  const byName = new Map<string, number>();
  let count = 0;
  let out = '';
  let from = 0;
  let i = 0;
  const emit = (end: number, replacement: string): void => {
    out += sql.slice(from, i) + replacement;
    from = end;
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'") {
      const escaped = i > 0 && /[eE]/.test(sql[i - 1] as string) && (i < 2 || !isIdChar(sql[i - 2] as string));
      i = skipQuoted(sql, i, "'", escaped);
    } else if (c === '"') {
      i = skipQuoted(sql, i, '"', false);
    } else if (c === '$') {
      i = skipDollarQuoted(sql, i) ?? i + 1;
    } else if (c === '-' || c === '/') {
      const after = skipComment(sql, i);
      i = after === i ? i + 1 : after;
    } else if (c === ':' && sql[i + 1] === ':') {
      i += 2;
    } else if (c === ':' && isIdStart(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && isIdChar(sql[j] as string)) j++;
      const name = sql.slice(i, j);
      let index = byName.get(name);
      if (index === undefined) {
        index = ++count;
        byName.set(name, index);
        names.set(index, name);
      }
      emit(j, `$${index}`);
    } else if (c === '?') {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j] as string)) j++;
      let index: number;
      if (j === i + 1) {
        index = ++count;
      } else {
        index = Number(sql.slice(i + 1, j));
        count = Math.max(count, index);
        if (!names.has(index)) names.set(index, sql.slice(i, j));
      }
      emit(j, `$${index}`);
    } else if (c === ';') {
      return { text: out + sql.slice(from, i), count, names, rest: sql.slice(i + 1) };
    } else if (isIdChar(c)) {
      // A word: a `$` or digit inside it never starts a parameter or a dollar quote.
      i++;
      while (i < sql.length && isIdChar(sql[i] as string)) i++;
    } else {
      i++;
    }
  }
  return { text: out + sql.slice(from), count, names, rest: '' };
}

/** translate() for prepare(): exactly one statement, or DbError `statement_count`. */
export function translateOne(sql: string): PgText {
  if (isBlankSql(sql)) throw noStatement();
  const first = translate(sql);
  if (isBlankSql(first.text)) throw noStatement();
  if (!isBlankSql(first.rest)) throw secondStatement(first.rest);
  return first;
}

/** The parameter count of text holding any number of statements (exec() refuses any). */
export function parameterCount(sql: string): number {
  let total = 0;
  let rest = sql;
  while (rest !== '') {
    const part = translate(rest);
    total += part.count;
    rest = part.rest;
  }
  return total;
}
