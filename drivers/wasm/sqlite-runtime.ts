/**
 * Loads @sqlite.org/sqlite-wasm once per process and exposes the small,
 * typed slice of it the driver uses. Statements go through the raw wasm
 * exports (plain numbers and pointers) rather than the oo1 wrapper: fewer
 * checks per call, and exact control over stepping to SQLITE_DONE.
 */
import { setFlagsFromString } from 'node:v8';

/** Raw C entry points of the wasm build, pointers as numbers, 64-bit integers as bigint. */
export interface SqliteExports {
  sqlite3_open_v2(zFilename: number, ppDb: number, flags: number, zVfs: number): number;
  sqlite3_close_v2(pDb: number): number;
  sqlite3_extended_result_codes(pDb: number, onoff: number): number;
  sqlite3_busy_timeout(pDb: number, ms: number): number;
  sqlite3_busy_handler(pDb: number, xBusy: number, pArg: number): number;
  sqlite3_prepare_v3(pDb: number, zSql: number, nByte: number, flags: number, ppStmt: number, pzTail: number): number;
  sqlite3_step(pStmt: number): number;
  sqlite3_reset(pStmt: number): number;
  sqlite3_finalize(pStmt: number): number;
  sqlite3_clear_bindings(pStmt: number): number;
  sqlite3_bind_parameter_count(pStmt: number): number;
  sqlite3_bind_parameter_name(pStmt: number, i: number): number;
  sqlite3_bind_null(pStmt: number, i: number): number;
  sqlite3_bind_int64(pStmt: number, i: number, v: bigint): number;
  sqlite3_bind_double(pStmt: number, i: number, v: number): number;
  sqlite3_bind_text(pStmt: number, i: number, p: number, n: number, destructor: number): number;
  sqlite3_bind_blob(pStmt: number, i: number, p: number, n: number, destructor: number): number;
  sqlite3_column_count(pStmt: number): number;
  sqlite3_column_name(pStmt: number, i: number): number;
  sqlite3_column_type(pStmt: number, i: number): number;
  sqlite3_column_double(pStmt: number, i: number): number;
  sqlite3_column_int64(pStmt: number, i: number): bigint;
  sqlite3_column_text(pStmt: number, i: number): number;
  sqlite3_column_blob(pStmt: number, i: number): number;
  sqlite3_column_bytes(pStmt: number, i: number): number;
  sqlite3_changes64(pDb: number): bigint;
  sqlite3_last_insert_rowid(pDb: number): bigint;
  sqlite3_errmsg(pDb: number): number;
  sqlite3_extended_errcode(pDb: number): number;
  sqlite3_get_autocommit(pDb: number): number;
  sqlite3_errstr(rc: number): number;
}

/** The wasm memory helpers used by the driver and the file layer. */
export interface SqliteWasm {
  /** Raw exports. */
  readonly exports: SqliteExports;
  /** The module's WebAssembly.Memory (word-diff.ts shares it). */
  readonly memory: object;
  /** Current byte view of wasm memory. */
  heap8u(): Uint8Array;
  /** Current 32-bit view of wasm memory. */
  heap32(): Int32Array;
  /** sqlite3_malloc. */
  alloc(n: number): number;
  /** sqlite3_free. */
  dealloc(p: number): void;
  /** Reads a pointer-sized value. */
  peekPtr(p: number): number;
  /** Writes a pointer-sized value. */
  pokePtr(p: number, v: number): void;
  /** Writes a 32-bit integer. */
  poke32(p: number, v: number): void;
  /** Writes a 64-bit integer. */
  poke64(p: number, v: bigint): void;
  /** Writes a value of a named C type, e.g. 'double'. */
  poke(p: number, v: number, type: string): void;
  /** Allocates a NUL-terminated copy of a string. */
  allocCString(s: string): number;
  /** Makes a JS function callable from C; returns its function pointer. */
  installFunction(fn: (...args: number[]) => number, signature: string): number;
  /** Releases a pointer from installFunction. */
  uninstallFunction(ptr: number): void;
}

/** The structs and registration calls a file layer needs. */
export interface SqliteStructType {
  /** Wasm address of the struct. */
  readonly pointer: number;
  /** Installs JS functions as the struct's function-pointer members. */
  installMethods(methods: Record<string, (...args: never[]) => number | void>, applyArgcCheck?: boolean): void;
  [member: `$${string}`]: unknown;
}

/** The slice of the module object the driver touches. */
export interface Sqlite3 {
  /** Library versions. */
  readonly version: { readonly libVersion: string };
  /** Memory helpers and raw exports. */
  readonly wasm: SqliteWasm;
  /** Constants and struct constructors. */
  readonly capi: Record<string, unknown> & {
    sqlite3_vfs: new () => SqliteStructType;
    sqlite3_io_methods: new () => SqliteStructType;
    sqlite3_file: { structInfo: { sizeof: number } };
    sqlite3_db_config(pDb: number, op: number, a: number, b: number): number;
  };
  /** VFS registration. */
  readonly vfs: {
    installVfs(opt: {
      io?: { struct: SqliteStructType; methods: Record<string, (...args: never[]) => number | void> };
      vfs?: { struct: SqliteStructType; methods: Record<string, (...args: never[]) => number | void>; asDefault?: boolean };
    }): unknown;
  };
}

let loading: Promise<Sqlite3> | undefined;

/**
 * V8 compiles WebAssembly with its baseline compiler (Liftoff) and then
 * recompiles every function that turns hot with its optimising one
 * (TurboFan). For SQLite that second tier costs resident memory that is never
 * given back, 10 MiB (Node 20) to 24 MiB (Node 22) for an idle server, and in a
 * long session it keeps compiling as more of SQLite turns hot. agentbus's
 * statements are short and bound by file I/O and locking, so the optimised
 * code buys little (commits are faster without its compile work; full-text
 * queries that score many rows are slower, within their targets); the
 * measurements are in docs/performance.md ("Drivers", "Search", "Soak"). The
 * flag only affects modules compiled after it is set, so it must come before
 * the import.
 */
const WASM_BASELINE_ONLY = '--liftoff-only';

/** Loads (once) and returns the module. */
export function loadSqlite3(): Promise<Sqlite3> {
  if (loading === undefined) {
    setFlagsFromString(WASM_BASELINE_ONLY);
    loading = import('@sqlite.org/sqlite-wasm').then(async (m) => {
      const init = (m as unknown as { default: (opts?: object) => Promise<unknown> }).default;
      // The module reports through console by default; agentbus keeps stdout for JSON-RPC.
      const sqlite3 = (await init({ print: () => {}, printErr: () => {} })) as Sqlite3;
      return sqlite3;
    });
  }
  return loading;
}
