/**
 * What a tool call answers while the database cannot be opened: the storage
 * layer's sentence (what is wrong, which file or process, what to run), the
 * same one the harness's stderr gets, under a code a client can branch on.
 * Only causes that end by themselves (another process holding the file) are
 * retryable; the rest need a person, after which the next call works without
 * a restart (bus-process.ts tries the open again).
 */
import { BusError, type BusErrorCode } from '../bus/bus-error.js';
import { DbError, type DbErrorCode } from '../db/contract/db-error.js';

/** The tool error code of each open failure a person or time can end; the rest are `storage_unavailable`. */
const OPEN_FAILURE_CODE: Partial<Readonly<Record<DbErrorCode, BusErrorCode>>> = {
  full: 'disk_full',
  permission: 'permission_denied',
  readonly: 'permission_denied',
  corrupt: 'database_corrupt',
  in_use: 'database_in_use',
  busy: 'database_in_use',
  locked: 'database_in_use',
  setup_timeout: 'database_in_use',
};

const WAIT_HINT = 'This ends by itself once the other process is done; agentbus tries again by itself, so call again in a while.';
const FIX_HINT = 'Tell the user; once it is fixed, the next call works, without restarting this session.';

/** The one line for the harness's stderr (and the log) about an open failure. */
export function openFailureLine(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The tool error for what opening the database threw; `undefined` for an
 * error that is not the storage's (a bug: the caller answers `internal`).
 */
export function openFailureError(error: unknown): BusError | undefined {
  if (error instanceof BusError) return error;
  if (!(error instanceof DbError)) return undefined;
  const code = OPEN_FAILURE_CODE[error.code] ?? 'storage_unavailable';
  // A server that did not answer (unavailable) may answer the next attempt, like a process that is done with the file.
  const retryable = code === 'database_in_use' || error.code === 'unavailable';
  return new BusError(code, `agentbus cannot use its database: ${error.message}. ${retryable ? WAIT_HINT : FIX_HINT}`, {
    retryable,
    cause: error,
  });
}
