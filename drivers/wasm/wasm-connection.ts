/**
 * Connection and Statement of the wasm driver, on SQLite's raw C API, to the
 * letter of src/db/contract/driver.ts: plain row objects, integers as JS numbers,
 * `{name: 1}` binding `:name`, and exec/run stepping every statement until
 * SQLITE_DONE (oo1's exec steps a statement without result columns only
 * once, so `PRAGMA incremental_vacuum` would free a single page).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  BindParams,
  Connection,
  SqliteCapabilities,
  OpenOptions,
  Row,
  RunResult,
  SqlValue,
  Statement,
} from '../../src/db/contract/driver.js';
import { DbError, dbErrorCodeFromSqlite } from '../../src/db/contract/db-error.js';
import { runResult } from '../../src/db/contract/run-result.js';
import { assertNoParameter, isBlankSql, noStatement, secondStatement } from '../../src/db/contract/sql-scan.js';
import { checkValue, StatementParameters, unsafeIntegerError } from '../../src/db/contract/statement-parameters.js';
import { settleReleases } from './lock-table.js';
import { VFS_NAME, type NodeFsVfs } from './node-fs-vfs.js';
import { BusyWaiter } from './busy-wait.js';
import {
  SQLITE_DONE,
  SQLITE_OK,
  SQLITE_OPEN_CREATE as OPEN_CREATE,
  SQLITE_OPEN_EXRESCODE as OPEN_EXRESCODE,
  SQLITE_OPEN_READWRITE as OPEN_READWRITE,
  SQLITE_ROW,
} from './sqlite-codes.js';
import { WAL_SIZE_LIMIT_BYTES as WAL_TRUNCATE_BYTES } from '../../src/db/contract/wal-size-limit.js';
import { readCString } from './c-string.js';
import type { Sqlite3, SqliteExports, SqliteWasm } from './sqlite-runtime.js';

const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;
const SQLITE_TRANSIENT = -1;
const DBCONFIG_DQS_DML = 1013;
const DBCONFIG_DQS_DDL = 1014;
/** How many distinct exec() texts stay compiled per connection. */
const EXEC_CACHE_SIZE = 32;

/** How often (ms) a connection looks at the WAL size. */
const WAL_CHECK_INTERVAL_MS = 1000;
/** Busy wait allowed for the growth-guard checkpoint. */
const WAL_TRUNCATE_BUSY_MS = 1000;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A growable scratch buffer in wasm memory for binding text and blobs. */
class Scratch {
  #ptr = 0;
  #size = 0;
  readonly #wasm: SqliteWasm;

  constructor(wasm: SqliteWasm) {
    this.#wasm = wasm;
  }

  /** Returns an address with at least `n` bytes. */
  reserve(n: number): number {
    if (n > this.#size) {
      if (this.#ptr) this.#wasm.dealloc(this.#ptr);
      const size = Math.max(256, 2 ** Math.ceil(Math.log2(n)));
      this.#ptr = this.#wasm.alloc(size);
      if (!this.#ptr) throw new DbError('error', 'out of wasm memory');
      this.#size = size;
    }
    return this.#ptr;
  }

  /** Frees the buffer. */
  free(): void {
    if (this.#ptr) this.#wasm.dealloc(this.#ptr);
    this.#ptr = 0;
    this.#size = 0;
  }
}

/**
 * The DbError for SQLite's last error on `pDb` (or for `rc` alone). When the
 * file layer failed behind it, its reason (e.g. "lock table ... is full")
 * joins the message and becomes the cause: SQLite itself only got a code.
 */
function sqliteError(vfs: NodeFsVfs, e: SqliteExports, wasm: SqliteWasm, pDb: number, rc: number, dbPath: string): DbError {
  const code = pDb ? e.sqlite3_extended_errcode(pDb) || rc : rc;
  const message = pDb ? readCString(wasm, e.sqlite3_errmsg(pDb)) : readCString(wasm, e.sqlite3_errstr(rc));
  const cause = vfs.takeFailure(dbPath, code);
  return new DbError(dbErrorCodeFromSqlite(code), cause === undefined ? message : `${message}: ${cause.message}`, {
    sqliteCode: code,
    error: cause,
  });
}

export class WasmConnection implements Connection {
  readonly path: string;
  readonly capabilities: SqliteCapabilities;
  readonly #e: SqliteExports;
  readonly #wasm: SqliteWasm;
  readonly #vfs: NodeFsVfs;
  #pDb: number;
  readonly #busyTimeoutMs: number;
  readonly #statements = new Set<WasmStatement>();
  /** exec() text that compiled to one statement, kept compiled. */
  readonly #execCache = new Map<string, number>();
  readonly #scratch: Scratch;
  readonly #ptrs: number;
  #nextWalCheck = 0;
  readonly #busy: BusyWaiter;
  #busyHandlerPtr = 0;

  private constructor(sqlite3: Sqlite3, vfs: NodeFsVfs, pDb: number, path: string, busyTimeoutMs: number, capabilities: SqliteCapabilities) {
    this.#wasm = sqlite3.wasm;
    this.#e = sqlite3.wasm.exports;
    this.#vfs = vfs;
    this.#pDb = pDb;
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.capabilities = capabilities;
    this.#scratch = new Scratch(sqlite3.wasm);
    this.#ptrs = sqlite3.wasm.alloc(16);
    this.#busy = new BusyWaiter(busyTimeoutMs, vfs);
  }

  /** Opens (creating if missing) the database at `path`. */
  static open(sqlite3: Sqlite3, vfs: NodeFsVfs, path: string, options: OpenOptions, capabilities: SqliteCapabilities): WasmConnection {
    const wasm = sqlite3.wasm;
    const e = wasm.exports;
    const abs = resolve(path);
    const zName = wasm.allocCString(abs);
    const zVfs = wasm.allocCString(VFS_NAME);
    const ppDb = wasm.alloc(8);
    let pDb = 0;
    try {
      wasm.pokePtr(ppDb, 0);
      const rc = e.sqlite3_open_v2(zName, ppDb, OPEN_READWRITE | OPEN_CREATE | OPEN_EXRESCODE, zVfs);
      pDb = wasm.peekPtr(ppDb);
      if (rc !== SQLITE_OK) {
        const error = sqliteError(vfs, e, wasm, pDb, rc, abs);
        if (pDb) e.sqlite3_close_v2(pDb);
        throw new DbError(error.code, `cannot open ${abs}: ${error.message}`, { sqliteCode: error.sqliteCode, error: error.cause });
      }
    } finally {
      wasm.dealloc(zName);
      wasm.dealloc(zVfs);
      wasm.dealloc(ppDb);
    }
    const busy = Math.max(0, Math.floor(options.busyTimeoutMs));
    e.sqlite3_extended_result_codes(pDb, 1);
    // Same dialect as the native driver: no double-quoted string literals, foreign keys on.
    sqlite3.capi.sqlite3_db_config(pDb, DBCONFIG_DQS_DML, 0, 0);
    sqlite3.capi.sqlite3_db_config(pDb, DBCONFIG_DQS_DDL, 0, 0);
    const conn = new WasmConnection(sqlite3, vfs, pDb, abs, busy, capabilities);
    try {
      conn.#installBusyHandler();
      conn.exec('PRAGMA foreign_keys=ON');
    } catch (error) {
      conn.close();
      throw error;
    }
    return conn;
  }

  #installBusyHandler(): void {
    const waiter = this.#busy;
    this.#busyHandlerPtr = this.#wasm.installFunction((_pArg: number, attempt: number) => waiter.handle(attempt), 'i(pi)');
    this.#e.sqlite3_busy_handler(this.#pDb, this.#busyHandlerPtr, 0);
  }

  #live(): number {
    if (this.#pDb === 0) throw new DbError('closed', `connection to ${this.path} used after close(): open it again`);
    return this.#pDb;
  }

  get inTransaction(): boolean {
    return this.#e.sqlite3_get_autocommit(this.#live()) === 0;
  }

  get openStatements(): number {
    return this.#statements.size;
  }

  /** Builds a DbError from the connection's last error. */
  error(rc: number): DbError {
    return sqliteError(this.#vfs, this.#e, this.#wasm, this.#pDb, rc, this.path);
  }

  exec(sql: string): void {
    const pDb = this.#live();
    this.beforeStatement();
    const cached = this.#execCache.get(sql);
    if (cached !== undefined) {
      this.#stepToDone(cached, true);
      this.afterStatement();
      return;
    }
    // Checked before any statement runs (the engine would only tell, statement by statement).
    assertNoParameter(sql);
    const e = this.#e;
    const wasm = this.#wasm;
    const bytes = encoder.encode(sql);
    const pSql = wasm.alloc(bytes.length + 1);
    if (!pSql) throw new DbError('error', 'out of wasm memory');
    try {
      const heap8 = wasm.heap8u();
      heap8.set(bytes, pSql);
      heap8[pSql + bytes.length] = 0;
      const ppStmt = this.#ptrs;
      const pzTail = this.#ptrs + 8;
      let cursor = pSql;
      const end = pSql + bytes.length;
      while (cursor < end) {
        wasm.pokePtr(ppStmt, 0);
        const rc = e.sqlite3_prepare_v3(pDb, cursor, end - cursor, 0, ppStmt, pzTail);
        if (rc !== SQLITE_OK) throw this.error(rc);
        const pStmt = wasm.peekPtr(ppStmt);
        const first = cursor === pSql;
        cursor = wasm.peekPtr(pzTail);
        if (pStmt === 0) continue; // whitespace or a comment
        // Core runs BEGIN/COMMIT through exec on every transaction: keep single statements compiled.
        const single = first && /^\s*;?\s*$/.test(decoder.decode(wasm.heap8u().subarray(cursor, end)));
        if (single && this.#execCache.size < EXEC_CACHE_SIZE) {
          this.#execCache.set(sql, pStmt);
          this.#stepToDone(pStmt, true);
        } else {
          this.#stepToDone(pStmt, false);
        }
      }
    } finally {
      wasm.dealloc(pSql);
    }
    this.afterStatement();
  }

  /** Steps a statement until SQLITE_DONE, then resets (kept) or finalizes it; throws DbError on failure. */
  #stepToDone(pStmt: number, keep: boolean): void {
    const e = this.#e;
    let rc: number;
    do rc = e.sqlite3_step(pStmt);
    while (rc === SQLITE_ROW);
    const error = rc === SQLITE_DONE ? undefined : this.error(rc);
    if (keep) e.sqlite3_reset(pStmt);
    else e.sqlite3_finalize(pStmt);
    settleReleases();
    if (error !== undefined) throw error;
  }

  prepare(sql: string): Statement {
    const pDb = this.#live();
    if (isBlankSql(sql)) throw noStatement();
    const e = this.#e;
    const wasm = this.#wasm;
    const bytes = encoder.encode(sql);
    const pSql = this.#scratch.reserve(bytes.length + 1);
    const heap8 = wasm.heap8u();
    heap8.set(bytes, pSql);
    heap8[pSql + bytes.length] = 0;
    const ppStmt = this.#ptrs;
    const pzTail = this.#ptrs + 8;
    wasm.pokePtr(ppStmt, 0);
    const rc = e.sqlite3_prepare_v3(pDb, pSql, bytes.length, 0, ppStmt, pzTail);
    if (rc !== SQLITE_OK) throw this.error(rc);
    const pStmt = wasm.peekPtr(ppStmt);
    if (pStmt === 0) throw noStatement();
    const tailAt = wasm.peekPtr(pzTail) - pSql;
    if (tailAt < bytes.length) {
      const tail = decoder.decode(wasm.heap8u().subarray(pSql + tailAt, pSql + bytes.length));
      if (!isBlankSql(tail)) {
        e.sqlite3_finalize(pStmt);
        throw secondStatement(tail);
      }
    }
    const stmt = new WasmStatement(this, e, wasm, this.#scratch, pDb, pStmt);
    this.#statements.add(stmt);
    return stmt;
  }

  /** Forgets a finalized statement. */
  forget(stmt: WasmStatement): void {
    this.#statements.delete(stmt);
  }

  /**
   * Runs before every statement. SQLite starts a read transaction with an
   * unlocked look at the WAL index (is the WAL fully checkpointed? which read
   * mark?). A private copy as old as the last lock would send readers to a
   * WAL read mark when they could ignore the WAL, and that starves the
   * checkpointer; so bring the copy up to date here (a pread of the lock table,
   * plus a region read only when someone pushed). An index whose connection
   * holds a WAL-index slot is skipped: its transaction's snapshot is already
   * fixed (docs/drivers.md, "Syscalls per commit").
   */
  beforeStatement(): void {
    this.#vfs.refreshIndexesBeforeStatement();
  }

  /** Runs after every completed statement: the WAL growth guard. */
  afterStatement(): void {
    const now = Date.now();
    if (now < this.#nextWalCheck) return;
    this.#nextWalCheck = now + WAL_CHECK_INTERVAL_MS;
    const pDb = this.#pDb;
    if (pDb === 0 || this.#e.sqlite3_get_autocommit(pDb) === 0) return;
    const size = statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size < WAL_TRUNCATE_BYTES) return;
    this.#busy.timeoutMs = Math.min(this.#busyTimeoutMs, WAL_TRUNCATE_BUSY_MS);
    try {
      const stmt = this.prepare('PRAGMA wal_checkpoint(TRUNCATE)');
      try {
        stmt.get();
      } finally {
        stmt.finalize();
      }
    } catch {
      // Readers still hold old snapshots; try again on a later statement.
    } finally {
      this.#busy.timeoutMs = this.#busyTimeoutMs;
    }
  }

  close(): void {
    const pDb = this.#pDb;
    if (pDb === 0) return;
    for (const stmt of [...this.#statements]) stmt.finalize();
    for (const pStmt of this.#execCache.values()) this.#e.sqlite3_finalize(pStmt);
    this.#execCache.clear();
    this.#pDb = 0;
    const rc = this.#e.sqlite3_close_v2(pDb);
    this.#scratch.free();
    this.#wasm.dealloc(this.#ptrs);
    if (this.#busyHandlerPtr) this.#wasm.uninstallFunction(this.#busyHandlerPtr);
    if (rc !== SQLITE_OK) {
      throw new DbError(dbErrorCodeFromSqlite(rc), `closing ${this.path} failed (${rc})`, { sqliteCode: rc });
    }
  }
}

class WasmStatement implements Statement {
  readonly #conn: WasmConnection;
  readonly #e: SqliteExports;
  readonly #wasm: SqliteWasm;
  readonly #scratch: Scratch;
  readonly #pDb: number;
  #pStmt: number;
  #names: string[] | undefined;
  #parameters: StatementParameters | undefined;

  constructor(conn: WasmConnection, e: SqliteExports, wasm: SqliteWasm, scratch: Scratch, pDb: number, pStmt: number) {
    this.#conn = conn;
    this.#e = e;
    this.#wasm = wasm;
    this.#scratch = scratch;
    this.#pDb = pDb;
    this.#pStmt = pStmt;
  }

  #live(): number {
    if (this.#pStmt === 0) throw new DbError('closed', 'statement used after finalize() or close(): prepare it again');
    return this.#pStmt;
  }

  /** The statement's parameters as SQLite lists them, read once. */
  #params(p: number): StatementParameters {
    if (this.#parameters === undefined) {
      const e = this.#e;
      this.#parameters = new StatementParameters(e.sqlite3_bind_parameter_count(p), (i) => {
        const name = e.sqlite3_bind_parameter_name(p, i);
        return name === 0 ? undefined : readCString(this.#wasm, name);
      });
    }
    return this.#parameters;
  }

  #bindOne(p: number, i: number, v: SqlValue, key: number | string): number {
    const e = this.#e;
    if (v === null) return e.sqlite3_bind_null(p, i);
    switch (typeof v) {
      case 'number':
        if (Number.isSafeInteger(v)) return e.sqlite3_bind_int64(p, i, BigInt(v));
        return e.sqlite3_bind_double(p, i, v);
      case 'bigint':
        checkValue(v, key);
        return e.sqlite3_bind_int64(p, i, v);
      case 'string': {
        checkValue(v, key);
        const cap = v.length * 3 + 1;
        const ptr = this.#scratch.reserve(cap);
        const { written } = encoder.encodeInto(v, this.#wasm.heap8u().subarray(ptr, ptr + cap));
        return e.sqlite3_bind_text(p, i, ptr, written, SQLITE_TRANSIENT);
      }
      default:
        checkValue(v, key);
        {
          // A Uint8Array. The scratch address is never 0, so an empty one binds as a zero-length blob, not NULL.
          const blob = v as Uint8Array;
          const ptr = this.#scratch.reserve(blob.length + 1);
          this.#wasm.heap8u().set(blob, ptr);
          return e.sqlite3_bind_blob(p, i, ptr, blob.length, SQLITE_TRANSIENT);
        }
    }
  }

  #bind(params: BindParams | undefined): number {
    const p = this.#live();
    this.#params(p).check(params);
    const e = this.#e;
    this.#conn.beforeStatement();
    e.sqlite3_reset(p);
    e.sqlite3_clear_bindings(p);
    if (params === undefined) return p;
    if (Array.isArray(params)) {
      const list = params as readonly SqlValue[];
      for (let i = 0; i < list.length; i++) {
        const rc = this.#bindOne(p, i + 1, list[i] as SqlValue, i + 1);
        if (rc !== SQLITE_OK) throw this.#conn.error(rc);
      }
      return p;
    }
    const named = params as Readonly<Record<string, SqlValue>>;
    const parameters = this.#params(p);
    for (const key of Object.keys(named)) {
      const rc = this.#bindOne(p, parameters.indexOf(key), named[key] as SqlValue, key);
      if (rc !== SQLITE_OK) throw this.#conn.error(rc);
    }
    return p;
  }

  #row(p: number): Row {
    const e = this.#e;
    const n = e.sqlite3_column_count(p);
    let names = this.#names;
    if (names === undefined || names.length !== n) {
      names = [];
      for (let i = 0; i < n; i++) names.push(readCString(this.#wasm, e.sqlite3_column_name(p, i)));
      this.#names = names;
    }
    const row: Row = {};
    for (let i = 0; i < n; i++) {
      const name = names[i] as string;
      switch (e.sqlite3_column_type(p, i)) {
        case SQLITE_INTEGER: {
          const d = e.sqlite3_column_double(p, i);
          if (Number.isSafeInteger(d)) row[name] = d;
          else {
            // The double may have rounded across the boundary: decide on the exact value.
            const big = e.sqlite3_column_int64(p, i);
            if (big < -MAX_SAFE || big > MAX_SAFE) throw unsafeIntegerError(`column "${name}"`, big);
            row[name] = Number(big);
          }
          break;
        }
        case SQLITE_FLOAT:
          row[name] = e.sqlite3_column_double(p, i);
          break;
        case SQLITE_TEXT: {
          const ptr = e.sqlite3_column_text(p, i);
          const len = e.sqlite3_column_bytes(p, i);
          row[name] = len === 0 ? '' : decoder.decode(this.#wasm.heap8u().subarray(ptr, ptr + len));
          break;
        }
        case SQLITE_BLOB: {
          const ptr = e.sqlite3_column_blob(p, i);
          const len = e.sqlite3_column_bytes(p, i);
          row[name] = len === 0 ? new Uint8Array(0) : this.#wasm.heap8u().slice(ptr, ptr + len);
          break;
        }
        default:
          row[name] = null;
      }
    }
    return row;
  }

  #fail(p: number, rc: number): DbError {
    const error = this.#conn.error(rc);
    this.#e.sqlite3_reset(p);
    settleReleases();
    return error;
  }

  run(params?: BindParams): RunResult {
    const p = this.#bind(params);
    const e = this.#e;
    let rc: number;
    do rc = e.sqlite3_step(p);
    while (rc === SQLITE_ROW);
    if (rc !== SQLITE_DONE) throw this.#fail(p, rc);
    const result = runResult(Number(e.sqlite3_changes64(this.#pDb)), e.sqlite3_last_insert_rowid(this.#pDb));
    e.sqlite3_reset(p);
    settleReleases();
    this.#conn.afterStatement();
    return result;
  }

  get<T extends object = Row>(params?: BindParams): T | undefined {
    const p = this.#bind(params);
    const rc = this.#e.sqlite3_step(p);
    if (rc === SQLITE_ROW) {
      try {
        return this.#row(p) as T;
      } finally {
        this.#e.sqlite3_reset(p);
        settleReleases();
      }
    }
    if (rc !== SQLITE_DONE) throw this.#fail(p, rc);
    this.#e.sqlite3_reset(p);
    settleReleases();
    return undefined;
  }

  all<T extends object = Row>(params?: BindParams): T[] {
    const p = this.#bind(params);
    const rows: T[] = [];
    try {
      for (;;) {
        const rc = this.#e.sqlite3_step(p);
        if (rc === SQLITE_ROW) {
          rows.push(this.#row(p) as T);
          continue;
        }
        if (rc !== SQLITE_DONE) throw this.#conn.error(rc);
        break;
      }
    } finally {
      this.#e.sqlite3_reset(p);
      settleReleases();
    }
    return rows;
  }

  finalize(): void {
    const p = this.#pStmt;
    if (p === 0) return;
    this.#pStmt = 0;
    this.#e.sqlite3_finalize(p);
    settleReleases();
    this.#conn.forget(this);
  }
}
