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
  SqliteCapabilities,
  DriverLoadResult,
  OpenOptions,
  Row,
  RunResult,
  SqlValue,
  Statement,
} from '../../src/db/contract/driver.js';
import { SQLITE_CAPABILITIES } from '../../src/db/contract/driver.js';
import { DbError, dbErrorCodeFromSqlite } from '../../src/db/contract/db-error.js';
import { runResult } from '../../src/db/contract/run-result.js';
import { assertNoParameter, isBlankSql, noStatement, scanParameters, secondStatement } from '../../src/db/contract/sql-scan.js';
import { checkValue, StatementParameters, unsafeIntegerError } from '../../src/db/contract/statement-parameters.js';
import { execPolicy, statementPolicy, waitingOnLocks, type LockWaitHost, type WaitPolicy } from './lock-wait.js';

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
  const e = error as { errcode?: unknown; message?: unknown; code?: unknown };
  if (typeof e?.errcode === 'number') {
    return new DbError(dbErrorCodeFromSqlite(e.errcode), String(e.message), {
      sqliteCode: e.errcode,
      error,
    });
  }
  const message = String(e?.message ?? error);
  if (e?.code === 'ERR_OUT_OF_RANGE') {
    // node:sqlite refuses to round an integer beyond 2^53 on read; it names the value, not the column.
    const value = /(-?\d+)\s*$/.exec(message)?.[1];
    const mapped = unsafeIntegerError('a value in the result', value);
    return new DbError(mapped.code, mapped.message, { error });
  }
  if (error instanceof TypeError || error instanceof RangeError) {
    return new DbError('sql', message, { error });
  }
  return new DbError('error', message, { error });
}

function normalizeRow(row: unknown): Row {
  // node:sqlite returns null-prototype objects; core expects plain ones.
  return { ...(row as Row) };
}

/**
 * The value node:sqlite should bind for `value`, after the contract's check:
 * node:sqlite binds every number as REAL, so a safe integer goes as a bigint
 * to bind as INTEGER like the wasm driver (typeof(), integer division and
 * JSON text then agree between drivers).
 */
function engineValue(value: SqlValue, key: number | string): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  checkValue(value, key);
  return value;
}

type EngineArgs = unknown[];

class NativeStatement implements Statement {
  #stmt: StatementSync | undefined;
  readonly #conn: NativeConnection;
  readonly #sql: string;
  readonly #returnsRows: boolean;
  readonly #waits: WaitPolicy;
  #parameters: StatementParameters | undefined;

  constructor(stmt: StatementSync, sql: string, conn: NativeConnection) {
    this.#stmt = stmt;
    this.#sql = sql;
    this.#conn = conn;
    this.#waits = statementPolicy(sql);
    // node:sqlite's run() steps only once when the statement yields a row, and
    // some pragmas (incremental_vacuum) yield column-less rows: one step frees
    // one page. Those statements are stepped to the end through all().
    this.#returnsRows = stmt.columns().length > 0 || /^\s*PRAGMA\b/i.test(sql);
  }

  #live(): StatementSync {
    if (this.#stmt === undefined) throw new DbError('closed', 'statement used after finalize() or close(): prepare it again');
    return this.#stmt;
  }

  /** The values checked against the statement (node:sqlite leaves a missing one NULL) and converted. */
  #args(params: BindParams | undefined): EngineArgs {
    // node:sqlite does not list a statement's parameters: read them from the text, once.
    if (this.#parameters === undefined) {
      const scanned = scanParameters(this.#sql);
      this.#parameters = new StatementParameters(scanned.count, (i) => scanned.names.get(i));
    }
    this.#parameters.check(params);
    if (params === undefined) return [];
    if (Array.isArray(params)) {
      const list = params as readonly SqlValue[];
      const args: unknown[] = new Array(list.length);
      for (let i = 0; i < list.length; i++) args[i] = engineValue(list[i] as SqlValue, i + 1);
      return args;
    }
    const named = params as Readonly<Record<string, SqlValue>>;
    const object: Record<string, unknown> = {};
    for (const key of Object.keys(named)) object[key] = engineValue(named[key] as SqlValue, key);
    return [object];
  }

  run(params?: BindParams): RunResult {
    const stmt = this.#live();
    const args = this.#args(params);
    try {
      if (this.#returnsRows) {
        // Rows are discarded unread: an integer beyond 2^53 in them must not throw.
        stmt.setReadBigInts(true);
        try {
          this.#conn.waiting(this.#waits, () => (stmt.all as (...a: unknown[]) => unknown[])(...args));
        } finally {
          stmt.setReadBigInts(false);
        }
        return this.#conn.lastChange();
      }
      const r = this.#conn.waiting(this.#waits, () =>
        (stmt.run as (...a: unknown[]) => { changes: number | bigint; lastInsertRowid: number | bigint })(...args),
      );
      return runResult(Number(r.changes), r.lastInsertRowid);
    } catch (error) {
      throw toDbError(error);
    }
  }

  get<T extends object = Row>(params?: BindParams): T | undefined {
    const stmt = this.#live();
    const args = this.#args(params);
    try {
      const row = this.#conn.waiting(this.#waits, () => (stmt.get as (...a: unknown[]) => unknown)(...args));
      return row === undefined ? undefined : (normalizeRow(row) as T);
    } catch (error) {
      throw toDbError(error);
    }
  }

  all<T extends object = Row>(params?: BindParams): T[] {
    const stmt = this.#live();
    const args = this.#args(params);
    try {
      const rows = this.#conn.waiting(this.#waits, () => (stmt.all as (...a: unknown[]) => unknown[])(...args));
      return rows.map((r) => normalizeRow(r) as T);
    } catch (error) {
      throw toDbError(error);
    }
  }

  finalize(): void {
    if (this.#stmt === undefined) return;
    // node:sqlite (22) has no finalize: the engine frees the statement when
    // the object is collected or the database closes.
    this.#stmt = undefined;
    this.#conn.forget(this);
  }
}

class NativeConnection implements Connection {
  readonly path: string;
  readonly capabilities: SqliteCapabilities;
  #db: DatabaseSync | undefined;
  readonly #statements = new Set<NativeStatement>();
  #changes: StatementSync | undefined;
  /** How refused calls wait (lock-wait.ts): SQLite's own timeout stays 0 but where its handler is wanted. */
  readonly #locks: LockWaitHost;

  /** Present when this Node's node:sqlite has backup(): the contract's optional stepped copy. */
  readonly copyTo?: (path: string, onStep: (copiedPages: number, totalPages: number) => void) => Promise<void>;

  constructor(db: DatabaseSync, path: string, capabilities: SqliteCapabilities, busyTimeoutMs: number, sqlite?: SqliteModule) {
    this.#db = db;
    this.path = path;
    this.capabilities = capabilities;
    const handlerOn = `PRAGMA busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`;
    this.#locks = {
      busyTimeoutMs,
      inTransaction: () => this.inTransaction,
      underSqliteHandler: (call) => this.#underSqliteHandler(handlerOn, call),
    };
    const backup = sqlite?.backup;
    if (sqlite !== undefined && typeof backup === 'function') {
      this.copyTo = (target, onStep) => this.#copyTo(sqlite, backup, target, onStep);
    }
  }

  /**
   * SQLite's online backup, COPY_STEP_PAGES pages a step, inside a read
   * transaction of this connection: every step reads the same snapshot, so
   * writers in other processes neither restart the copy nor get into it.
   */
  async #copyTo(sqlite: SqliteModule, backup: NonNullable<SqliteModule['backup']>, target: string, onStep: (copied: number, total: number) => void): Promise<void> {
    const db = this.#live();
    if (this.inTransaction) throw new DbError('locked', 'copyTo() inside a transaction: the copy reads its own snapshot; call it outside one');
    try {
      db.exec('BEGIN DEFERRED');
      try {
        db.prepare('SELECT 1 FROM sqlite_schema LIMIT 1').get(); // takes the snapshot the steps read
        const pages = await backup(db, target, { rate: COPY_STEP_PAGES, progress: ({ totalPages, remainingPages }) => onStep(totalPages - remainingPages, totalPages) });
        onStep(pages, pages); // node:sqlite reports every step but the last
      } finally {
        db.exec('ROLLBACK');
      }
      // The copied header says WAL; a file nobody else knows is set back to the rollback journal.
      const copy = new sqlite.DatabaseSync(target);
      try {
        copy.exec('PRAGMA journal_mode = DELETE');
      } finally {
        copy.close();
      }
    } catch (error) {
      throw toDbError(error);
    }
  }

  #live(): DatabaseSync {
    if (this.#db === undefined) throw new DbError('closed', `connection to ${this.path} used after close(): open it again`);
    return this.#db;
  }

  /** Runs an engine call, waiting out other connections' locks under `policy` (lock-wait.ts); errors come out unconverted. */
  waiting<T>(policy: WaitPolicy, call: () => T): T {
    return waitingOnLocks(this.#locks, policy, call);
  }

  /** Runs `call` with SQLite's own busy handler on (`handlerOn` sets its timeout), then off again. */
  #underSqliteHandler<T>(handlerOn: string, call: () => T): T {
    const db = this.#live();
    db.exec(handlerOn);
    try {
      return call();
    } finally {
      db.exec('PRAGMA busy_timeout = 0');
    }
  }

  get inTransaction(): boolean {
    const db = this.#live();
    const known = (db as { isTransaction?: unknown }).isTransaction;
    return typeof known === 'boolean' ? known : probeTransaction(db);
  }

  get openStatements(): number {
    return this.#statements.size;
  }

  exec(sql: string): void {
    const db = this.#live();
    assertNoParameter(sql);
    try {
      this.waiting(execPolicy(sql), () => db.exec(sql));
    } catch (error) {
      throw toDbError(error);
    }
  }

  /** What run() reports for a statement that was stepped through all(). */
  lastChange(): RunResult {
    if (this.#changes === undefined) {
      this.#changes = this.#live().prepare('SELECT changes() AS c, last_insert_rowid() AS r');
      this.#changes.setReadBigInts(true);
    }
    const row = this.#changes.get() as { c: bigint; r: bigint };
    return runResult(Number(row.c), row.r);
  }

  prepare(sql: string): Statement {
    const db = this.#live();
    if (isBlankSql(sql)) throw noStatement();
    let stmt: StatementSync;
    try {
      // Preparing reads the schema, which may wait on a lock like any read.
      stmt = this.waiting('retry', () => db.prepare(sql));
    } catch (error) {
      throw toDbError(error);
    }
    // sourceSQL is SQLite's text of the compiled statement: the input up to where it stopped reading.
    const tail = sql.slice(stmt.sourceSQL.length);
    if (!isBlankSql(tail)) throw secondStatement(tail);
    const statement = new NativeStatement(stmt, sql, this);
    this.#statements.add(statement);
    return statement;
  }

  /** Forgets a finalized statement. */
  forget(stmt: NativeStatement): void {
    this.#statements.delete(stmt);
  }

  close(): void {
    const db = this.#db;
    if (db === undefined) return;
    for (const stmt of [...this.#statements]) stmt.finalize();
    this.#db = undefined;
    this.#changes = undefined;
    try {
      db.close();
    } catch (error) {
      throw toDbError(error);
    }
  }
}

/** Pages per backup step: 4 MiB at 4 KiB pages, a few milliseconds each, so progress and timers run between them. */
const COPY_STEP_PAGES = 1024;

/**
 * Whether a transaction is open, on a node:sqlite without `isTransaction`
 * (before 22.16): a deferred BEGIN takes no lock and fails only inside a
 * transaction; when it succeeds it is undone at once.
 */
export function probeTransaction(db: DatabaseSync): boolean {
  try {
    db.exec('BEGIN DEFERRED');
  } catch {
    return true;
  }
  db.exec('ROLLBACK');
  return false;
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
  const capabilities: SqliteCapabilities = {
    name: 'native',
    sqliteVersion,
    lockProtocol: 'posix',
    wal: true,

    ...SQLITE_CAPABILITIES,
  };
  const driver: Driver = {
    capabilities,
    open(path: string, options: OpenOptions): Connection {
      let db: DatabaseSync;
      try {
        db = new sqlite.DatabaseSync(path, {
          // Locks are waited for in lock-wait.ts, which hands SQLite its own timeout only where it should wait itself.
          timeout: 0,
          enableForeignKeyConstraints: true,
          enableDoubleQuotedStringLiterals: false,
        });
      } catch (error) {
        throw toDbError(error);
      }
      return new NativeConnection(db, path, capabilities, options.busyTimeoutMs, sqlite);
    },
  };
  return { ok: true, driver };
}
