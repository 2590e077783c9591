/**
 * The parameters of one prepared statement and the check that the values
 * given to run/get/all fit them, written once so both drivers refuse the same
 * mistakes with the same words (driver.ts states the rules). Each driver
 * builds this from what its engine knows and binds the values itself.
 */
import type { BindParams, SqlValue } from './driver.js';
import { DbError } from './db-error.js';

/** The largest magnitude a JS number holds exactly as an integer: 2^53 - 1. */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export class StatementParameters {
  /** The highest parameter index (sqlite3_bind_parameter_count). */
  readonly count: number;
  /** Named parameters (`:a`, `@a`, `$a`, `#a`) by their bare name (the key a caller passes). */
  readonly #named = new Map<string, { readonly index: number; readonly token: string }>();
  /** A bare name written with two prefixes (`:a` and `@a`): an object cannot tell them apart. */
  readonly #ambiguous: string | undefined;

  /** `nameAt(i)` is SQLite's name of parameter i (1-based), undefined for a bare `?`. */
  constructor(count: number, nameAt: (index: number) => string | undefined) {
    this.count = count;
    let ambiguous: string | undefined;
    for (let i = 1; i <= count; i++) {
      const token = nameAt(i);
      if (token === undefined || token.startsWith('?')) continue;
      const name = token.slice(1);
      const seen = this.#named.get(name);
      if (seen !== undefined) ambiguous ??= `${seen.token} and ${token}`;
      else this.#named.set(name, { index: i, token });
    }
    this.#ambiguous = ambiguous;
  }

  /** The index of the named parameter `name` (no prefix), or 0. */
  indexOf(name: string): number {
    return this.#named.get(name)?.index ?? 0;
  }

  /**
   * Throws DbError `bind` unless `values` fits: nothing for a statement
   * without parameters; an array of exactly `count` values for `?`
   * parameters; an object with an own key for every named parameter and no
   * other keys. Values themselves are checked while binding (`checkValue`).
   */
  check(values: BindParams | undefined): void {
    if (values === undefined) {
      if (this.count > 0) {
        throw bindError(`the statement has ${plural(this.count, 'parameter')} (${this.#list()}) and no values were given`);
      }
      return;
    }
    if (Array.isArray(values)) {
      if (this.#named.size > 0) {
        throw bindError(`the statement has named parameters (${this.#list()}): pass an object keyed by name, not an array`);
      }
      if (values.length !== this.count) {
        throw bindError(
          `${plural(values.length, 'value')} given for ${plural(this.count, 'parameter')}: pass exactly one value per parameter (null for NULL)`,
        );
      }
      return;
    }
    if (this.#ambiguous !== undefined) {
      throw bindError(`the statement names one parameter twice (${this.#ambiguous}): an object key cannot tell them apart; rename one`);
    }
    if (this.#named.size !== this.count) {
      throw bindError(
        this.#named.size === 0
          ? `the statement has ${plural(this.count, 'nameless parameter')} (?): pass an array, not an object`
          : `the statement mixes nameless (?) and named parameters (${this.#list()}): use one kind`,
      );
    }
    const object = values as Readonly<Record<string, SqlValue>>;
    for (const key of Object.keys(object)) {
      if (!this.#named.has(key)) {
        const hint = /^[:@$#]/.test(key) && this.#named.has(key.slice(1)) ? ` (keys are bare names: "${key.slice(1)}")` : '';
        throw bindError(`unknown named parameter "${key}"${hint}; the statement has ${this.#list()}`);
      }
    }
    for (const [name, { token }] of this.#named) {
      if (!Object.hasOwn(object, name)) throw bindError(`missing named parameter ${token}: pass "${name}" (null for NULL)`);
    }
  }

  #list(): string {
    const tokens: string[] = [];
    for (const { token } of this.#named.values()) tokens.push(token);
    const nameless = this.count - this.#named.size;
    if (nameless > 0) tokens.push(nameless === 1 ? '?' : `${nameless} x ?`);
    return tokens.join(', ');
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function bindError(message: string): DbError {
  return new DbError('bind', message);
}

/** Names parameter `index` (1-based) or `name` in messages. */
export function parameterLabel(key: number | string): string {
  return typeof key === 'number' ? `parameter ${key}` : `parameter "${key}"`;
}

/**
 * Throws unless SQLite can store `value` exactly: null, a number, a bigint
 * within 64 bits (DbError `integer_range`), a string without U+0000 (text
 * functions and node:sqlite's reader stop at it), or a Uint8Array. `key`
 * names the parameter in the message.
 */
export function checkValue(value: unknown, key: number | string): void {
  switch (typeof value) {
    case 'number':
      return;
    case 'string':
      if (value.includes('\0')) {
        throw bindError(`${parameterLabel(key)} is text containing U+0000, which SQLite text cannot hold: remove it, or store the data as a Uint8Array blob`);
      }
      return;
    case 'bigint':
      if (value < INT64_MIN || value > INT64_MAX) {
        throw new DbError('integer_range', `${parameterLabel(key)} is ${value}, outside SQLite's 64-bit integers: store it as text`);
      }
      return;
    case 'object':
      if (value === null || value instanceof Uint8Array) return;
      break;
    default:
      break;
  }
  const what =
    value === undefined
      ? 'undefined (pass null for NULL)'
      : typeof value === 'boolean'
        ? 'a boolean (pass 1 or 0)'
        : `a ${typeof value === 'object' ? ((value as object).constructor?.name ?? 'object') : typeof value}`;
  throw bindError(`${parameterLabel(key)} is ${what}; SQLite stores null, numbers, bigints, strings and Uint8Arrays`);
}

/**
 * The DbError (`integer_range`) for an integer from SQLite that a JS number
 * cannot hold exactly; `where` says which (a column, the inserted rowid).
 */
export function unsafeIntegerError(where: string, value?: bigint | number | string): DbError {
  const what = value === undefined ? 'an integer' : `the integer ${value}`;
  return new DbError(
    'integer_range',
    `${where} is ${what}, beyond what a JS number holds exactly (±${SAFE}): read it with CAST(... AS TEXT), or store such values as text`,
  );
}
