/**
 * Connection and Statement of the wasm driver, on SQLite's raw C API. Core
 * relies on exact semantics: plain row objects, integers as JS numbers,
 * `{name: 1}` binding `:name`, and exec/run stepping every statement until
 * SQLITE_DONE (oo1's exec steps a statement without result columns only
 * once, so `PRAGMA incremental_vacuum` would free a single page).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  BindParams,
  Connection,
  DriverCapabilities,
  OpenOptions,
  Row,
  RunResult,
  SqlValue,
  Statement,
} from '../../src/db/driver.js';
import { DbError, dbErrorCodeFromSqlite } from '../../src/db/db-error.js';
import { VFS_NAME } from './node-fs-vfs.js';
import { refreshIndexesBeforeStatement } from './shm-index.js';
import { BusyWaiter } from './busy-wait.js';
import type { Sqlite3, SqliteExports, SqliteWasm } from './sqlite-runtime.js';

const SQLITE_OK = 0;
const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;
const SQLITE_TRANSIENT = -1;
const OPEN_READWRITE = 0x2;
const OPEN_CREATE = 0x4;
const OPEN_EXRESCODE = 0x02000000;
const DBCONFIG_DQS_DML = 1013;
const DBCONFIG_DQS_DDL = 1014;
/** How many distinct exec() texts stay compiled per connection. */
const EXEC_CACHE_SIZE = 32;

/**
 * WAL growth guard. SQLite's automatic checkpoint is PASSIVE: it cannot reset
 * the WAL while readers keep old snapshots, so under constant readers the WAL
 * only grows. Past this size a connection that just finished a statement in
 * autocommit mode asks for a TRUNCATE checkpoint with a short busy wait.
 */
const WAL_TRUNCATE_BYTES = 16 * 1024 * 1024;
/** How often (ms) a connection looks at the WAL size. */
const WAL_CHECK_INTERVAL_MS = 1000;
/** Busy wait allowed for the growth-guard checkpoint. */
const WAL_TRUNCATE_BUSY_MS = 1000;

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

function sqliteError(e: SqliteExports, wasm: SqliteWasm, pDb: number, rc: number): DbError {
  const code = pDb ? e.sqlite3_extended_errcode(pDb) || rc : rc;
  const message = pDb ? wasm.cstrToJs(e.sqlite3_errmsg(pDb)) : wasm.cstrToJs(e.sqlite3_errstr(rc));
  return new DbError(dbErrorCodeFromSqlite(code), message, { sqliteCode: code });
}

export class WasmConnection implements Connection {
  readonly path: string;
  readonly capabilities: DriverCapabilities;
  readonly #e: SqliteExports;
  readonly #wasm: SqliteWasm;
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

  private constructor(sqlite3: Sqlite3, pDb: number, path: string, busyTimeoutMs: number, capabilities: DriverCapabilities) {
    this.#wasm = sqlite3.wasm;
    this.#e = sqlite3.wasm.exports;
    this.#pDb = pDb;
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.capabilities = capabilities;
    this.#scratch = new Scratch(sqlite3.wasm);
    this.#ptrs = sqlite3.wasm.alloc(16);
    this.#busy = new BusyWaiter(busyTimeoutMs);
  }

  /** Opens (creating if missing) the database at `path`. */
  static open(sqlite3: Sqlite3, path: string, options: OpenOptions, capabilities: DriverCapabilities): WasmConnection {
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
        const error = sqliteError(e, wasm, pDb, rc);
        if (pDb) e.sqlite3_close_v2(pDb);
        throw new DbError(error.code, `cannot open ${abs}: ${error.message}`, { sqliteCode: error.sqliteCode });
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
    const conn = new WasmConnection(sqlite3, pDb, abs, busy, capabilities);
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
    if (this.#pDb === 0) throw new DbError('sql', `connection to ${this.path} used after close()`);
    return this.#pDb;
  }

  /** Builds a DbError from the connection's last error. */
  error(rc: number): DbError {
    return sqliteError(this.#e, this.#wasm, this.#pDb, rc);
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
    if (error !== undefined) throw error;
  }

  prepare(sql: string): Statement {
    const pDb = this.#live();
    const e = this.#e;
    const wasm = this.#wasm;
    const bytes = encoder.encode(sql);
    const pSql = this.#scratch.reserve(bytes.length + 1);
    const heap8 = wasm.heap8u();
    heap8.set(bytes, pSql);
    heap8[pSql + bytes.length] = 0;
    wasm.pokePtr(this.#ptrs, 0);
    const rc = e.sqlite3_prepare_v3(pDb, pSql, bytes.length, 0, this.#ptrs, 0);
    if (rc !== SQLITE_OK) throw this.error(rc);
    const pStmt = wasm.peekPtr(this.#ptrs);
    if (pStmt === 0) throw new DbError('sql', 'prepare() needs one SQL statement; the text has none');
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
    refreshIndexesBeforeStatement();
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
  #params: Map<string, number> | undefined;

  constructor(conn: WasmConnection, e: SqliteExports, wasm: SqliteWasm, scratch: Scratch, pDb: number, pStmt: number) {
    this.#conn = conn;
    this.#e = e;
    this.#wasm = wasm;
    this.#scratch = scratch;
    this.#pDb = pDb;
    this.#pStmt = pStmt;
  }

  #live(): number {
    if (this.#pStmt === 0) throw new DbError('sql', 'statement used after finalize()');
    return this.#pStmt;
  }

  #paramIndex(name: string): number {
    if (this.#params === undefined) {
      const map = new Map<string, number>();
      const n = this.#e.sqlite3_bind_parameter_count(this.#pStmt);
      for (let i = 1; i <= n; i++) {
        const p = this.#e.sqlite3_bind_parameter_name(this.#pStmt, i);
        if (p === 0) continue;
        const full = this.#wasm.cstrToJs(p);
        if (full.startsWith('?')) continue;
        map.set(full.slice(1), i);
      }
      this.#params = map;
    }
    return this.#params.get(name) ?? 0;
  }

  #bindOne(p: number, i: number, v: SqlValue | boolean | undefined): number {
    const e = this.#e;
    if (v === null || v === undefined) return e.sqlite3_bind_null(p, i);
    switch (typeof v) {
      case 'number':
        if (Number.isSafeInteger(v)) return e.sqlite3_bind_int64(p, i, BigInt(v));
        return e.sqlite3_bind_double(p, i, v);
      case 'bigint':
        if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new DbError('sql', `integer ${v} does not fit in 64 bits`);
        return e.sqlite3_bind_int64(p, i, v);
      case 'string': {
        const cap = v.length * 3 + 1;
        const ptr = this.#scratch.reserve(cap);
        const { written } = encoder.encodeInto(v, this.#wasm.heap8u().subarray(ptr, ptr + cap));
        return e.sqlite3_bind_text(p, i, ptr, written, SQLITE_TRANSIENT);
      }
      case 'boolean':
        return e.sqlite3_bind_int64(p, i, v ? 1n : 0n);
      default:
        if (v instanceof Uint8Array) {
          const ptr = this.#scratch.reserve(v.length + 1);
          this.#wasm.heap8u().set(v, ptr);
          return e.sqlite3_bind_blob(p, i, ptr, v.length, SQLITE_TRANSIENT);
        }
        throw new DbError('sql', `cannot bind a value of type ${typeof v}`);
    }
  }

  #bind(params: BindParams | undefined): number {
    const p = this.#live();
    const e = this.#e;
    this.#conn.beforeStatement();
    e.sqlite3_reset(p);
    e.sqlite3_clear_bindings(p);
    if (params === undefined) return p;
    if (Array.isArray(params)) {
      const list = params as readonly SqlValue[];
      const count = e.sqlite3_bind_parameter_count(p);
      if (list.length > count) throw new DbError('sql', `${list.length} values bound to a statement with ${count} parameters`);
      for (let i = 0; i < list.length; i++) {
        const rc = this.#bindOne(p, i + 1, list[i]);
        if (rc !== SQLITE_OK) throw this.#conn.error(rc);
      }
      return p;
    }
    const named = params as Readonly<Record<string, SqlValue>>;
    for (const key of Object.keys(named)) {
      const index = this.#paramIndex(key);
      if (index === 0) throw new DbError('sql', `Unknown named parameter '${key}'`);
      const rc = this.#bindOne(p, index, named[key]);
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
      for (let i = 0; i < n; i++) names.push(this.#wasm.cstrToJs(e.sqlite3_column_name(p, i)));
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
            const big = e.sqlite3_column_int64(p, i);
            row[name] = big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
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
    return error;
  }

  run(params?: BindParams): RunResult {
    const p = this.#bind(params);
    const e = this.#e;
    let rc: number;
    do rc = e.sqlite3_step(p);
    while (rc === SQLITE_ROW);
    if (rc !== SQLITE_DONE) throw this.#fail(p, rc);
    const result = {
      changes: Number(e.sqlite3_changes64(this.#pDb)),
      lastInsertRowid: Number(e.sqlite3_last_insert_rowid(this.#pDb)),
    };
    e.sqlite3_reset(p);
    this.#conn.afterStatement();
    return result;
  }

  get<T extends object = Row>(params?: BindParams): T | undefined {
    const p = this.#bind(params);
    const rc = this.#e.sqlite3_step(p);
    if (rc === SQLITE_ROW) {
      const row = this.#row(p);
      this.#e.sqlite3_reset(p);
      return row as T;
    }
    if (rc !== SQLITE_DONE) throw this.#fail(p, rc);
    this.#e.sqlite3_reset(p);
    return undefined;
  }

  all<T extends object = Row>(params?: BindParams): T[] {
    const p = this.#bind(params);
    const rows: T[] = [];
    for (;;) {
      const rc = this.#e.sqlite3_step(p);
      if (rc === SQLITE_ROW) {
        rows.push(this.#row(p) as T);
        continue;
      }
      if (rc !== SQLITE_DONE) throw this.#fail(p, rc);
      break;
    }
    this.#e.sqlite3_reset(p);
    return rows;
  }

  finalize(): void {
    const p = this.#pStmt;
    if (p === 0) return;
    this.#pStmt = 0;
    this.#e.sqlite3_finalize(p);
    this.#conn.forget(this);
  }
}
