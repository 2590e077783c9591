/**
 * Core's handle on one open database: statement cache, transactions and
 * pragmas, written once over the Driver contract.
 */
import { DbError } from './db-error.js';
import type { BindParams, Connection, DriverCapabilities, Row, RunResult, SqlResult, Statement, WakeSource } from './driver.js';

export class Database<C extends DriverCapabilities = DriverCapabilities> {
  readonly #conn: Connection<C>;
  readonly #statements = new Map<string, Statement>();
  /** The dialect's BEGIN texts, read once: the transaction path stays two field reads. */
  readonly #beginWrite: string;
  readonly #beginRead: string;
  #depth = 0;
  #savepoints = 0;

  constructor(connection: Connection<C>) {
    this.#conn = connection;
    this.#beginWrite = connection.capabilities.dialect.beginWrite;
    this.#beginRead = connection.capabilities.dialect.beginRead;
  }

  /** The absolute path of the database file. */
  get path(): string {
    return this.#conn.path;
  }

  /** What the driver behind this database can do. */
  get capabilities(): C {
    return this.#conn.capabilities;
  }

  /** The connection's wake source (Connection.wakeSource): present when capabilities.wakeups is 'notify'. */
  get wakeSource(): WakeSource | undefined {
    return this.#conn.wakeSource;
  }

  /** True while a transaction opened by `transaction` or `read` is running. */
  get inTransaction(): boolean {
    return this.#depth > 0;
  }

  /** Statements open on the connection, cached ones included: a diagnostic that must stay bounded. */
  get openStatements(): number {
    return this.#conn.openStatements;
  }

  /** True when the driver copies the database in steps (Connection.copyTo); without it a copy is one VACUUM INTO. */
  get copiesInSteps(): boolean {
    return this.#conn.copyTo !== undefined;
  }

  /** Connection.copyTo, outside any transaction; throws `locked` inside one or when the driver has no stepped copy (check copiesInSteps). */
  async copyTo(path: string, onStep: (copiedPages: number, totalPages: number) => void): Promise<void> {
    if (this.#depth > 0 || this.#conn.copyTo === undefined) {
      throw new DbError('locked', this.#depth > 0 ? 'copyTo() inside a transaction; call it outside one' : 'this driver has no stepped copy; use VACUUM INTO');
    }
    await this.#conn.copyTo(path, onStep);
  }

  /** Runs statements that return no rows. */
  exec(sql: string): void {
    this.#conn.exec(sql);
  }

  /** A prepared statement, compiled once per connection and reused. */
  prepare(sql: string): Statement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = this.#conn.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  run(sql: string, params?: BindParams): RunResult {
    return this.prepare(sql).run(params);
  }

  get<T extends object = Row>(sql: string, params?: BindParams): T | undefined {
    return this.prepare(sql).get<T>(params);
  }

  all<T extends object = Row>(sql: string, params?: BindParams): T[] {
    return this.prepare(sql).all<T>(params);
  }

  /**
   * The single value of a `PRAGMA name` (or `PRAGMA name(arg)`) query. The
   * statement is cached like prepare()'s (callers pass constant texts, and
   * the maintenance tick asks every time), so a call leaves nothing open.
   */
  pragma(text: string): SqlResult | undefined {
    const row = this.prepare(`PRAGMA ${text}`).get();
    return row === undefined ? undefined : Object.values(row)[0];
  }

  /**
   * Runs `fn` in a write transaction (the dialect's beginWrite: BEGIN
   * IMMEDIATE on SQLite, so the write lock is taken up front and busy handling
   * applies there, never mid-transaction).
   * Commits on return, rolls back on throw. Nested calls use a savepoint.
   * `fn` must be synchronous: a returned promise rolls back and throws TypeError.
   */
  transaction<T>(fn: () => T): T {
    return this.#wrap(this.#beginWrite, fn);
  }

  /** Runs `fn` in a read transaction: one consistent snapshot for every statement inside. */
  read<T>(fn: () => T): T {
    return this.#wrap(this.#beginRead, fn);
  }

  #wrap<T>(begin: string, fn: () => T): T {
    if (this.#depth > 0) return this.#savepoint(fn);
    try {
      this.#conn.exec(begin);
    } catch (error) {
      // A begin of several statements (postgres's BEGIN; SELECT pg_advisory_xact_lock)
      // can fail after its BEGIN ran: leave no aborted transaction behind.
      this.#rollbackQuietly();
      throw error;
    }
    this.#depth = 1;
    let result: T;
    try {
      result = fn();
      rejectPromise(result);
    } catch (error) {
      this.#depth = 0;
      this.#rollbackQuietly();
      throw error;
    }
    try {
      this.#conn.exec('COMMIT');
    } catch (error) {
      this.#rollbackQuietly();
      throw error;
    } finally {
      this.#depth = 0;
    }
    return result;
  }

  #savepoint<T>(fn: () => T): T {
    const name = `sp${++this.#savepoints}`;
    this.#conn.exec(`SAVEPOINT ${name}`);
    this.#depth++;
    try {
      const result = fn();
      rejectPromise(result);
      this.#conn.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      // SQLite may have rolled the whole transaction back by itself (SQLITE_FULL,
      // an I/O error, an interrupt, ON CONFLICT ROLLBACK, RAISE(ROLLBACK)): then
      // there is no savepoint left to undo, and the caller needs this error, not
      // "no such savepoint".
      if (this.#conn.inTransaction) {
        this.#conn.exec(`ROLLBACK TO ${name}`);
        this.#conn.exec(`RELEASE ${name}`);
      }
      throw error;
    } finally {
      this.#depth--;
      this.#savepoints--;
    }
  }

  #rollbackQuietly(): void {
    try {
      // Nothing is open when SQLite already rolled back by itself (e.g. after SQLITE_FULL).
      if (this.#conn.inTransaction) this.#conn.exec('ROLLBACK');
    } catch {
      // The error that brought us here is the one to report.
    }
  }

  /** Finalizes cached statements and closes the connection. Idempotent. */
  close(): void {
    for (const stmt of this.#statements.values()) stmt.finalize();
    this.#statements.clear();
    this.#conn.close();
  }
}

function rejectPromise(result: unknown): void {
  if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
    // The callback's own failure must not surface later as an unhandled rejection.
    (result as PromiseLike<unknown>).then(undefined, () => undefined);
    throw new TypeError(
      'transaction callback returned a promise; a transaction must be synchronous so it cannot interleave with other work — do the async part before or after it',
    );
  }
}
