/**
 * The messages between the calling thread and the bridge worker
 * (bridge.ts, bridge-worker.ts). Every request carries an id and its reply
 * repeats it: a reply that arrives after its call gave up (the deadline
 * passed) is recognised and dropped.
 */
import type { MessagePort } from 'node:worker_threads';
import type { DbErrorCode } from '../../src/db/contract/db-error.js';

/** What the worker needs to connect; posted once as workerData. */
export interface BridgeSettings {
  /** The connection URL, password included (never logged, never posted back; redactedUrl() for messages). */
  readonly url: string;
  /** The server's own bound on one statement (statement_timeout), in ms. */
  readonly statementTimeoutMs: number;
  /** The server's bound on a lock wait (lock_timeout), the writer lock included, in ms. */
  readonly lockTimeoutMs: number;
  /** How long connecting may take, in ms. */
  readonly connectTimeoutMs: number;
  /** The oldest server_version_num agentbus works with. */
  readonly minimumServerVersion: number;
  /** The shared word the worker sets to 1 (and notifies) after posting each reply. */
  readonly flag: Int32Array;
}

export type BridgeRequest =
  /** Runs text with the simple protocol: any number of statements, no parameters. */
  | { readonly id: number; readonly kind: 'exec'; readonly sql: string; readonly generation: number | undefined }
  /** Runs one statement with the extended protocol, prepared once per connection under `name`. */
  | {
      readonly id: number;
      readonly kind: 'query';
      readonly name: string;
      readonly sql: string;
      readonly values: readonly unknown[];
      readonly generation: number | undefined;
    }
  /** The call gave up: drop the connection (its query with it); the next request reconnects. */
  | { readonly id: number; readonly kind: 'abandon' }
  /** Starts the listening connection: LISTEN `channel`, each payload posted on `port` (no reply; it reconnects by itself). */
  | { readonly id: number; readonly kind: 'listen'; readonly channel: string; readonly port: MessagePort }
  /** Ends the connection (and the listening one). */
  | { readonly id: number; readonly kind: 'close' };

/** The failure of one request, as the storage layer's code and sentence. */
export interface BridgeFailure {
  readonly code: DbErrorCode;
  readonly message: string;
  /** PostgreSQL's SQLSTATE, when the server reported the error. */
  readonly sqlState: string | undefined;
}

export interface BridgeReply {
  /** The request this answers. */
  readonly id: number;
  /** Rows of a query (exec: none). */
  readonly rows: Record<string, unknown>[];
  /** Rows the statement changed, 0 when the server reports none. */
  readonly changes: number;
  /** Set when the request failed. */
  readonly failure: BridgeFailure | undefined;
  /** The server's transaction status after the request: I idle, T in a transaction, E in a failed one. */
  readonly txStatus: 'I' | 'T' | 'E';
  /** Which connection ran it: the worker counts its connections, so a transaction never continues on a new one. */
  readonly generation: number;
  /** The server's version, e.g. `16.4`, once connected. */
  readonly serverVersion: string | undefined;
}
