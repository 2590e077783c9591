/**
 * The Driver contract: the only surface core uses to reach SQLite.
 *
 * Both engines (node:sqlite and the WebAssembly build) are synchronous, so
 * every method here is synchronous too: a transaction can never span an
 * `await` and interleave with another request in the same process.
 * Transactions, pragmas, migrations and error mapping are written once, in
 * core (`database.ts`), on top of `exec` and `prepare`.
 */

/** A value SQLite can bind or return. Integers come back as JS numbers. */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** Positional (`?`) parameters, or named parameters (`:name` in SQL, `name` as the key). */
export type BindParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** A result row: a plain object keyed by column name. */
export type Row = Record<string, SqlValue>;

/** How a database file is locked across processes; recorded in the file header. */
export type LockProtocol = 'posix' | 'portable';

/** The driver names a user can select (`auto` chooses between them). */
export type DriverName = 'native' | 'wasm';

export interface RunResult {
  /** Rows changed by the statement (INSERT/UPDATE/DELETE), as a plain number. */
  readonly changes: number;
  /** Rowid of the last inserted row on this connection, as a plain number. */
  readonly lastInsertRowid: number;
}

export interface Statement {
  /** Executes to completion (stepping until done) and reports changes. */
  run(params?: BindParams): RunResult;
  /** Returns the first row, or undefined when there is none. */
  get<T extends object = Row>(params?: BindParams): T | undefined;
  /** Returns every row, in order. */
  all<T extends object = Row>(params?: BindParams): T[];
  /** Releases the statement; further use throws. Idempotent. */
  finalize(): void;
}

export interface DriverCapabilities {
  /** Which implementation this is; for display only, never branch on it. */
  readonly name: DriverName;
  /** The SQLite library version inside the engine, e.g. `3.51.3`. */
  readonly sqliteVersion: string;
  /** The cross-process lock protocol this driver speaks. */
  readonly lockProtocol: LockProtocol;
  /** True when `PRAGMA journal_mode=WAL` is safe across processes. */
  readonly wal: boolean;
}

export interface OpenOptions {
  /** Milliseconds a statement waits on a lock before failing with code `busy`. */
  readonly busyTimeoutMs: number;
}

export interface Connection {
  /** The absolute path this connection was opened on. */
  readonly path: string;
  /** What the driver behind this connection can do. */
  readonly capabilities: DriverCapabilities;
  /** Runs one or more statements that return no rows, each stepped until done. */
  exec(sql: string): void;
  /** Compiles one statement; throws DbError on a syntax error. */
  prepare(sql: string): Statement;
  /** Closes the connection and every statement it prepared. Idempotent. */
  close(): void;
}

export interface Driver {
  /** What connections from this driver can do. */
  readonly capabilities: DriverCapabilities;
  /** Opens (creating if missing) the database file at an absolute path. */
  open(path: string, options: OpenOptions): Connection;
}

/** Loading a driver either yields it or says, for a person, why it cannot run here. */
export type DriverLoadResult =
  | { readonly ok: true; readonly driver: Driver }
  | { readonly ok: false; readonly reason: string };
