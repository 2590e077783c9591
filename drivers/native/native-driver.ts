/**
 * The native driver: Node's built-in node:sqlite (Node >= 22.13) on SQLite's
 * default unix file layer, which locks with POSIX byte-range locks and maps
 * `-shm` into memory. That is the `posix` lock protocol.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  BindParams,
  Connection,
  Driver,
  DriverCapabilities,
  DriverLoadResult,
  OpenOptions,
  Row,
  RunResult,
  SqlValue,
  Statement,
} from '../../src/db/driver.js';
import { DbError, dbErrorCodeFromSqlite } from '../../src/db/db-error.js';

type SqliteModule = typeof import('node:sqlite');

/** The first Node release line whose node:sqlite works without a flag. */
export const NATIVE_MIN_NODE = '22.13.0';

/**
 * Node 22 announces node:sqlite with an ExperimentalWarning on stderr, which a
 * harness shows on every start. The warning is emitted through
 * process.emitWarning while the module loads, so filtering exactly that one
 * warning for the duration of the import silences it without hiding others.
 */
async function importNodeSqlite(): Promise<SqliteModule> {
  const emitWarning = process.emitWarning;
  process.emitWarning = function filtered(this: unknown, warning: string | Error, ...rest: unknown[]) {
    const first = rest[0];
    const type = typeof first === 'string' ? first : (first as { type?: string } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && text.includes('SQLite')) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
}

function toDbError(error: unknown): DbError {
  if (error instanceof DbError) return error;
  const e = error as { errcode?: unknown; message?: unknown };
  if (typeof e?.errcode === 'number') {
    return new DbError(dbErrorCodeFromSqlite(e.errcode), String(e.message), {
      sqliteCode: e.errcode,
      error,
    });
  }
  if (error instanceof TypeError || error instanceof RangeError) {
    return new DbError('sql', error.message, { error });
  }
  return new DbError('error', String((error as Error)?.message ?? error), { error });
}

function normalizeRow(row: unknown): Row {
  // node:sqlite returns null-prototype objects; core expects plain ones.
  return { ...(row as Row) };
}

class NativeStatement implements Statement {
  #stmt: StatementSync | undefined;
  readonly #returnsRows: boolean;

  readonly #lastChange: () => RunResult;

  constructor(stmt: StatementSync, sql: string, lastChange: () => RunResult) {
    this.#stmt = stmt;
    // node:sqlite's run() steps only once when the statement yields a row, and
    // some pragmas (incremental_vacuum) yield column-less rows: one step frees
    // one page. Those statements are stepped to the end through all().
    this.#returnsRows = stmt.columns().length > 0 || /^\s*PRAGMA\b/i.test(sql);
    this.#lastChange = lastChange;
  }

  #live(): StatementSync {
    if (this.#stmt === undefined) throw new DbError('sql', 'statement used after finalize()');
    return this.#stmt;
  }

  #call<R>(params: BindParams | undefined, fn: (stmt: StatementSync, args: SqlValue[] | [Record<string, SqlValue>]) => R): R {
    const stmt = this.#live();
    const args: SqlValue[] | [Record<string, SqlValue>] =
      params === undefined ? [] : Array.isArray(params) ? [...(params as SqlValue[])] : [params as Record<string, SqlValue>];
    try {
      return fn(stmt, args);
    } catch (error) {
      throw toDbError(error);
    }
  }

  run(params?: BindParams): RunResult {
    return this.#call(params, (stmt, args) => {
      if (this.#returnsRows) {
        (stmt.all as (...a: unknown[]) => unknown[])(...args);
        return this.#lastChange();
      }
      const r = (stmt.run as (...a: unknown[]) => { changes: number | bigint; lastInsertRowid: number | bigint })(...args);
      return { changes: Number(r.changes), lastInsertRowid: Number(r.lastInsertRowid) };
    });
  }

  get<T extends object = Row>(params?: BindParams): T | undefined {
    return this.#call(params, (stmt, args) => {
      const row = (stmt.get as (...a: unknown[]) => unknown)(...args);
      return row === undefined ? undefined : (normalizeRow(row) as T);
    });
  }

  all<T extends object = Row>(params?: BindParams): T[] {
    return this.#call(params, (stmt, args) => {
      const rows = (stmt.all as (...a: unknown[]) => unknown[])(...args);
      return rows.map((r) => normalizeRow(r) as T);
    });
  }

  finalize(): void {
    // node:sqlite finalizes statements when they are collected or the database closes.
    this.#stmt = undefined;
  }
}

class NativeConnection implements Connection {
  readonly path: string;
  readonly capabilities: DriverCapabilities;
  #db: DatabaseSync | undefined;

  constructor(db: DatabaseSync, path: string, capabilities: DriverCapabilities) {
    this.#db = db;
    this.path = path;
    this.capabilities = capabilities;
  }

  #live(): DatabaseSync {
    if (this.#db === undefined) throw new DbError('sql', `connection to ${this.path} used after close()`);
    return this.#db;
  }

  exec(sql: string): void {
    try {
      this.#live().exec(sql);
    } catch (error) {
      throw toDbError(error);
    }
  }

  #changes: StatementSync | undefined;

  #lastChange = (): RunResult => {
    this.#changes ??= this.#live().prepare('SELECT changes() AS c, last_insert_rowid() AS r');
    const row = this.#changes.get() as { c: number; r: number };
    return { changes: Number(row.c), lastInsertRowid: Number(row.r) };
  };

  prepare(sql: string): Statement {
    try {
      return new NativeStatement(this.#live().prepare(sql), sql, this.#lastChange);
    } catch (error) {
      throw toDbError(error);
    }
  }

  close(): void {
    const db = this.#db;
    if (db === undefined) return;
    this.#db = undefined;
    try {
      db.close();
    } catch (error) {
      throw toDbError(error);
    }
  }
}

function nodeVersionAtLeast(version: string, minimum: string): boolean {
  const a = version.replace(/^v/, '').split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** Loads node:sqlite, or explains which Node version is needed. Never throws. */
export async function loadNativeDriver(): Promise<DriverLoadResult> {
  const needs = `the native driver needs Node >= ${NATIVE_MIN_NODE} (node:sqlite); this is Node ${process.version}`;
  if (!nodeVersionAtLeast(process.version, NATIVE_MIN_NODE)) return { ok: false, reason: needs };
  let sqlite: SqliteModule;
  try {
    sqlite = await importNodeSqlite();
  } catch {
    return { ok: false, reason: needs };
  }
  let sqliteVersion = 'unknown';
  try {
    const probe = new sqlite.DatabaseSync(':memory:');
    sqliteVersion = String((probe.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v);
    probe.close();
  } catch (error) {
    return { ok: false, reason: `node:sqlite failed to start: ${(error as Error).message}` };
  }
  const capabilities: DriverCapabilities = {
    name: 'native',
    sqliteVersion,
    lockProtocol: 'posix',
    wal: true,
  };
  const driver: Driver = {
    capabilities,
    open(path: string, options: OpenOptions): Connection {
      let db: DatabaseSync;
      try {
        db = new sqlite.DatabaseSync(path, {
          timeout: options.busyTimeoutMs,
          enableForeignKeyConstraints: true,
          enableDoubleQuotedStringLiterals: false,
        });
      } catch (error) {
        throw toDbError(error);
      }
      return new NativeConnection(db, path, capabilities);
    },
  };
  return { ok: true, driver };
}
