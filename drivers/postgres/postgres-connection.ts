/**
 * The Connection and Statement of the postgres driver: the synchronous
 * contract of src/db/contract/driver.ts over the bridge. Parameters are checked by
 * the same StatementParameters as the SQLite drivers; values are bound as
 * the contract says (a bigint as its decimal text, a Uint8Array as bytea,
 * NaN as NULL) and PostgreSQL infers each parameter's type from where it
 * stands. What differs from SQLite, and is not hidden: a syntax error is
 * reported by the first run, not by prepare() (preparing is free, the
 * server parses on first use); and there is no rowid, so
 * `lastInsertRowid` throws `sql` (use RETURNING).
 */
import { DbError } from '../../src/db/contract/db-error.js';
import { WAKE_CHANNEL, type BindParams, type Connection, type DriverCapabilities, type Row, type RunResult, type SqlValue, type Statement, type WakeSource } from '../../src/db/contract/driver.js';
import { checkValue, StatementParameters } from '../../src/db/contract/statement-parameters.js';
import type { Bridge, BridgeCall } from './bridge.js';
import type { BridgeReply } from './bridge-protocol.js';
import { parameterCount, translateOne, type PgText } from './pg-sql-text.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The RunResult of a PostgreSQL statement: changes, and no rowid. */
function pgRunResult(changes: number): RunResult {
  return {
    changes,
    get lastInsertRowid(): number {
      throw new DbError('sql', 'PostgreSQL has no rowid: read the inserted key with INSERT ... RETURNING (the statement ran)');
    },
  };
}

/** The value as the bridge posts it to pg, after checkValue accepted it. */
function toPg(value: SqlValue): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isNaN(value)) return null;
  return value;
}

export class PostgresConnection implements Connection<DriverCapabilities> {
  readonly path: string;
  readonly capabilities: DriverCapabilities;
  readonly #bridge: Bridge;
  readonly #deadlineMs: number;
  readonly #statements = new Set<PostgresStatement>();
  #txStatus: 'I' | 'T' | 'E' = 'I';
  /** The worker's connection that the open transaction began on. */
  #txGeneration: number | undefined;
  #nextStatement = 1;
  #closed = false;
  /** The server's version, known after the first round trip. */
  serverVersion: string | undefined;
  readonly #wakeListeners = new Set<(payload: string) => void>();
  #listening = false;

  /** The commits of every process on this database: the worker LISTENs from the first subscriber on, until close. */
  readonly wakeSource: WakeSource = {
    subscribe: (listener) => {
      const entry = (payload: string): void => listener(payload);
      this.#wakeListeners.add(entry);
      if (!this.#listening && !this.#closed) {
        this.#listening = true;
        this.#bridge.listen(WAKE_CHANNEL, (payload) => {
          for (const each of [...this.#wakeListeners]) each(payload);
        });
      }
      return () => this.#wakeListeners.delete(entry);
    },
  };

  constructor(bridge: Bridge, where: string, capabilities: DriverCapabilities, deadlineMs: number) {
    this.#bridge = bridge;
    this.path = where;
    this.capabilities = capabilities;
    this.#deadlineMs = deadlineMs;
  }

  get inTransaction(): boolean {
    this.#open();
    return this.#txStatus !== 'I';
  }

  get openStatements(): number {
    return this.#statements.size;
  }

  exec(sql: string): void {
    this.#open();
    if (parameterCount(sql) > 0) {
      throw new DbError('bind', 'exec() binds nothing, and the text has parameters: prepare the statement and pass the values to run()');
    }
    this.call({ kind: 'exec', sql });
  }

  prepare(sql: string): Statement {
    this.#open();
    const text = translateOne(sql);
    const statement = new PostgresStatement(this, text, `agentbus_${this.#nextStatement++}`);
    this.#statements.add(statement);
    return statement;
  }

  close(): void {
    if (this.#closed) return;
    for (const statement of [...this.#statements]) statement.finalize();
    this.#closed = true;
    this.#wakeListeners.clear();
    this.#bridge.close(Math.min(this.#deadlineMs, 2_000));
  }

  /** One round trip; keeps the transaction state the server reported, and throws the request's failure as a DbError. */
  call(request: DistributiveOmit<BridgeCall, 'generation'>): BridgeReply {
    this.#open();
    const generation = this.#txStatus === 'I' ? undefined : this.#txGeneration;
    let reply: BridgeReply;
    try {
      reply = this.#bridge.call({ ...request, generation } as BridgeCall, this.#deadlineMs);
    } catch (error) {
      // The worker drops the connection at a deadline, and the server rolls its transaction back.
      this.#txStatus = 'I';
      throw error;
    }
    if (this.#txStatus === 'I' && reply.txStatus !== 'I') this.#txGeneration = reply.generation;
    this.#txStatus = reply.txStatus;
    if (reply.serverVersion !== undefined) this.serverVersion = reply.serverVersion;
    if (reply.failure !== undefined) throw new DbError(reply.failure.code, reply.failure.message);
    return reply;
  }

  /** A statement's finalize(): it no longer counts as open. */
  forget(statement: PostgresStatement): void {
    this.#statements.delete(statement);
  }

  #open(): void {
    if (this.#closed) throw new DbError('closed', 'the database connection is closed');
  }
}

class PostgresStatement implements Statement {
  readonly #connection: PostgresConnection;
  readonly #text: PgText;
  readonly #name: string;
  readonly #parameters: StatementParameters;
  #finalized = false;

  constructor(connection: PostgresConnection, text: PgText, name: string) {
    this.#connection = connection;
    this.#text = text;
    this.#name = name;
    this.#parameters = new StatementParameters(text.count, (index) => text.names.get(index));
  }

  run(params?: BindParams): RunResult {
    return pgRunResult(this.#query(params).changes);
  }

  get<T extends object = Row>(params?: BindParams): T | undefined {
    return this.#query(params).rows[0] as T | undefined;
  }

  all<T extends object = Row>(params?: BindParams): T[] {
    return this.#query(params).rows as T[];
  }

  finalize(): void {
    this.#finalized = true;
    this.#connection.forget(this);
  }

  #query(params: BindParams | undefined): BridgeReply {
    if (this.#finalized) throw new DbError('closed', 'the statement was finalized');
    this.#parameters.check(params);
    const values: unknown[] = [];
    for (let index = 1; index <= this.#text.count; index++) {
      const token = this.#text.names.get(index);
      const key = token === undefined || token.startsWith('?') ? index : token.slice(1);
      const value = Array.isArray(params) ? params[index - 1] : (params as Record<string, SqlValue> | undefined)?.[key as string];
      checkValue(value, key);
      values.push(toPg(value as SqlValue));
    }
    return this.#connection.call({ kind: 'query', name: this.#name, sql: this.#text.text, values });
  }
}
