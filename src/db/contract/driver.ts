/**
 * The Driver contract: the only surface core uses to reach SQLite.
 *
 * Both engines (node:sqlite and the WebAssembly build) are synchronous, so
 * every method here is synchronous too: a transaction can never span an
 * `await` and interleave with another request in the same process.
 * Transactions, pragmas, migrations and error mapping are written once, in
 * core (`database.ts`), on top of `exec` and `prepare`. An asynchronous
 * engine (PostgreSQL) implements the same interface behind a synchronous
 * bridge (docs/architecture.md, "An asynchronous engine").
 */
import { SQLITE_DIALECT, type Dialect } from './dialect.js';

/**
 * A value SQLite can bind or return. Binding: null is NULL; a number that is
 * a safe integer (Number.isSafeInteger) binds as INTEGER and any other number
 * as REAL (NaN as NULL, SQLite's rule); a bigint binds as INTEGER and one
 * outside 64 bits throws `integer_range`; a string binds as TEXT and one
 * containing U+0000 throws `bind` (SQLite's text functions and node:sqlite's
 * reader stop at it: store such data as a blob); a Uint8Array (an empty one
 * too) binds as BLOB. Anything else (undefined, booleans, objects) throws
 * `bind`. Reading: INTEGER comes back as a number, and an integer beyond
 * ±(2^53-1) throws `integer_range` rather than come back rounded or as a
 * bigint (read such a column with CAST(x AS TEXT)); REAL as a number; TEXT as
 * a string, exactly as stored; BLOB as a Uint8Array (empty for a zero-length
 * blob); NULL as null. Rows therefore never hold a bigint.
 */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** A value as it comes back from SQLite: never a bigint (see SqlValue). */
export type SqlResult = Exclude<SqlValue, bigint>;

/**
 * The values for a statement's parameters. An array binds nameless
 * parameters (`?`, `?NNN`) by index and must hold exactly one value per
 * index; an object binds named parameters (`:name`, `@name`, `$name` in SQL,
 * the bare `name` as the key) and must have an own key for every one and no
 * other key. A statement without parameters takes no values; one that mixes
 * both kinds cannot be bound. A mismatch throws `bind` before anything runs.
 */
export type BindParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** A result row: a plain object keyed by column name. */
export type Row = Record<string, SqlResult>;

/** How a database file is locked across processes; recorded in the file header. */
export type LockProtocol = 'posix' | 'portable';

/** The driver names a user can select (`auto` chooses between them). */
export type DriverName = 'native' | 'wasm';

/** Every driver: the two SQLite file drivers `driver` selects, and `postgres`, which a `database_url` selects. */
export type AnyDriverName = DriverName | 'postgres';

/** How processes sharing the database exclude each other: a lock protocol on a file, or the database server itself. */
export type SharingModel = LockProtocol | 'server';

export interface RunResult {
  /** Rows changed by the statement (INSERT/UPDATE/DELETE), as a plain number. */
  readonly changes: number;
  /**
   * Rowid of the last inserted row on this connection, as a plain number.
   * Reading it throws `integer_range` when that rowid is beyond ±(2^53-1)
   * (the statement did run; run() itself does not throw for it).
   */
  readonly lastInsertRowid: number;
}

/**
 * One compiled statement. Every method that runs it first checks the values
 * against its parameters (BindParams), resets it and rebinds every
 * parameter, so nothing carries over from an earlier call, and leaves it
 * reset afterwards, holding no lock, even when it throws.
 */
export interface Statement {
  /** Executes to completion (stepping until done, rows discarded unread) and reports changes. */
  run(params?: BindParams): RunResult;
  /** Returns the first row, or undefined when there is none; the statement is not stepped further. */
  get<T extends object = Row>(params?: BindParams): T | undefined;
  /** Returns every row, in order. */
  all<T extends object = Row>(params?: BindParams): T[];
  /** Releases the statement; idempotent; any later run/get/all throws `closed`. */
  finalize(): void;
}

export interface DriverCapabilities {
  /** Which implementation this is; for display only, never branch on it. */
  readonly name: AnyDriverName;
  /** The SQLite library version inside the engine, e.g. `3.51.3`; empty for an engine that is not SQLite. */
  readonly sqliteVersion: string;
  /** The cross-process lock protocol this driver speaks; `server` when the database server serializes access (no file lock). */
  readonly lockProtocol: SharingModel;
  /** True when `PRAGMA journal_mode=WAL` is safe across processes (false where there is no journal file to choose); a file driver without it is refused at open. */
  readonly wal: boolean;
  /** The SQL spellings that differ between engines (dialect.ts). */
  readonly dialect: Dialect;
  /** Full-text search: SQLite's FTS5 table, or PostgreSQL's tsvector column (folded as unicode61 folds: sql/postgres/0014). */
  readonly fullText: 'fts5' | 'tsvector';
  /** How the database's size is measured: SQLite pages, or PostgreSQL's relation sizes. */
  readonly sizeOf: 'pages' | 'relations';
  /** How a waiter learns of a commit by another process: the bell file, or LISTEN/NOTIFY. */
  readonly wakeups: 'bell-file' | 'notify';
  /** How a backup is made: `VACUUM INTO` a file, or outside agentbus (pg_dump, replication). */
  readonly backup: 'vacuum-into' | 'external';
}

/** A SQLite driver's capabilities: a file, and the lock protocol recorded in its header. */
export interface SqliteCapabilities extends DriverCapabilities {
  /** Which SQLite driver this is; for display only, never branch on it. */
  readonly name: DriverName;
  /** The cross-process lock protocol this driver speaks. */
  readonly lockProtocol: LockProtocol;
}

export interface OpenOptions {
  /** Milliseconds a statement waits on a lock before failing with code `busy`. */
  readonly busyTimeoutMs: number;
  /** A server driver's bound on one call, round trip included (default busyTimeoutMs + 10 s); file drivers never wait on a network. */
  readonly deadlineMs?: number;
}

/** What a process-wide capabilities object of a SQLite driver holds beside its name, version and protocol. */
export const SQLITE_CAPABILITIES = {
  dialect: SQLITE_DIALECT,
  fullText: 'fts5',
  sizeOf: 'pages',
  wakeups: 'bell-file',
  backup: 'vacuum-into',
} as const satisfies Partial<DriverCapabilities>;

/** The NOTIFY channel a `wakeups: 'notify'` engine's committing side signals on and its wake source listens on. */
export const WAKE_CHANNEL = 'agentbus_wake';

/**
 * Where a `wakeups: 'notify'` connection hears commits of every process on
 * the same database (its own included): the payloads NOTIFYed on
 * WAKE_CHANNEL, delivered asynchronously, never while a call blocks. A lost
 * listening connection reconnects by itself and then delivers `*` (anything
 * may have been missed); listeners must still poll, since a notification can be lost.
 */
export interface WakeSource {
  /** Calls `listener` with each payload from now on, until the returned function is called; listeners must not throw. */
  subscribe(listener: (payload: string) => void): () => void;
}

export interface Connection<C extends DriverCapabilities = SqliteCapabilities> {
  /**
   * Present exactly when `capabilities.wakeups` is 'notify': the commits of
   * other processes, as notifications (WakeSource). A bell-file driver has none.
   */
  readonly wakeSource?: WakeSource;
  /** The absolute path this connection was opened on (a server's URL without its password). */
  readonly path: string;
  /** What the driver behind this connection can do. */
  readonly capabilities: C;
  /**
   * True while SQLite has a transaction open on this connection (it is not
   * in autocommit mode). It turns false by itself when SQLite rolls a
   * transaction back on its own (SQLITE_FULL, an I/O error, an interrupt,
   * ON CONFLICT ROLLBACK, RAISE(ROLLBACK)), so undo logic must check it.
   */
  readonly inTransaction: boolean;
  /**
   * How many statements prepare() returned on this connection that are not
   * finalized yet: a diagnostic (a statement cache must keep it bounded).
   * exec() never adds to it.
   */
  readonly openStatements: number;
  /**
   * Runs zero or more `;`-separated statements in order, each stepped until
   * done, their rows discarded; stops at the first failure and throws it,
   * leaving the statements before it applied. It binds nothing: text with
   * a parameter (`?`, `:name`) throws `bind` before any of it runs.
   */
  exec(sql: string): void;
  /**
   * Compiles exactly one statement (comments, whitespace and `;` around it
   * are fine); throws `statement_count` for text with none or with a second
   * statement after it (nothing of it runs), `sql` on a syntax error.
   */
  prepare(sql: string): Statement;
  /**
   * Optional (a driver without it is copied with VACUUM INTO): writes a copy
   * of the database, one snapshot of it, to a new file at `path` in steps,
   * calling `onStep` with the pages copied and the total after each (the
   * last with the two equal) and
   * yielding to the event loop between them; the copy is in rollback-journal
   * mode, as VACUUM INTO writes one. Throws `locked` inside a transaction.
   * Nothing else may use the connection until it settles.
   */
  copyTo?(path: string, onStep: (copiedPages: number, totalPages: number) => void): Promise<void>;
  /**
   * Finalizes every statement this connection prepared (using one afterwards
   * throws `closed`), then closes; idempotent. Any other use afterwards
   * throws `closed`.
   */
  close(): void;
}

export interface Driver<C extends DriverCapabilities = SqliteCapabilities> {
  /** What connections from this driver can do. */
  readonly capabilities: C;
  /** Opens (creating if missing) the database file at an absolute path; a server driver takes its URL instead. */
  open(path: string, options: OpenOptions): Connection<C>;
}

/** Loading a driver either yields it or says, for a person, why it cannot run here. */
export type DriverLoadResult<C extends DriverCapabilities = SqliteCapabilities> =
  | { readonly ok: true; readonly driver: Driver<C> }
  | { readonly ok: false; readonly reason: string };
