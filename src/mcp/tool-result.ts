/**
 * Shaping tool results: the same JSON as structuredContent and as a text
 * block; errors as `isError` results carrying `{error: {code, message, retryable}}`.
 */
import { BusError } from '../bus/bus-error.js';
import { DbError } from '../db/contract/db-error.js';
import { storageError } from '../db/storage/storage-error.js';

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function successResult(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

export function errorResult(error: BusError): ToolResult {
  const structured = { error: error.toJSON() };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

/**
 * Maps anything thrown by a handler to a BusError. Storage failures a person
 * must fix (a damaged file, a full disk, another user's or a read-only file,
 * a shared file deleted under the process, a lock owner that cannot be judged,
 * a network file system) are not retryable and say what to do; a retry loop
 * against them only fills the log. `unexpected`: worth a line in the log (the
 * caller rate-limits repeats). `dataDir` lets an I/O error on a full disk be
 * reported as `disk_full`.
 */
export function toBusError(error: unknown, dataDir?: string): { error: BusError; unexpected: boolean } {
  if (error instanceof BusError) return { error, unexpected: false };
  const e = error instanceof DbError && dataDir !== undefined ? storageError(error, dataDir) : error;
  if (e instanceof DbError) {
    const mapped = storageBusError(e, dataDir);
    if (mapped !== undefined) return mapped;
  }
  return { error: new BusError('internal', 'agentbus failed unexpectedly; the details are in the agentbus log', { retryable: true }), unexpected: true };
}

/**
 * A storage failure as the model is told of it, or undefined when it is none
 * of these. Long because it is a table, one case per DbError code with the
 * sentence that says what to do; each case is a line or one BusError.
 */
function storageBusError(e: DbError, dataDir: string | undefined): { error: BusError; unexpected: boolean } | undefined {
  const where = dataDir === undefined ? '' : ` (${dataDir})`;
  switch (e.code) {
    case 'busy':
    case 'locked':
      return { error: new BusError('internal', 'the database is busy with other agents; retry in a moment', { retryable: true }), unexpected: false };
    case 'corrupt':
      return {
        error: new BusError(
          'database_corrupt',
          `the agentbus database${where} is damaged (SQLite: ${e.message}); retrying cannot help. Tell the user: stop the agents using agentbus, run \`agentbus doctor\`, and restore a backup (agentbus keeps them in the backups folder of its data directory).`,
          { cause: e },
        ),
        unexpected: true,
      };
    case 'full':
      return {
        error: new BusError(
          'disk_full',
          `the disk holding the agentbus database${where} is full: nothing can be stored until space is freed, so retrying now cannot help. Tell the user to free disk space there; \`agentbus doctor\` shows how much is left.`,
          { cause: e },
        ),
        unexpected: true,
      };
    case 'permission':
    case 'readonly':
      return {
        error: new BusError(
          'permission_denied',
          `agentbus may not write its database${where} (${e.message}); retrying cannot help. Tell the user to run \`agentbus doctor\`, which says whose files they are and what to do.`,
          { cause: e },
        ),
        unexpected: true,
      };
    case 'replaced':
      return { error: new BusError('internal', e.message, { retryable: false, cause: e }), unexpected: true };
    case 'unavailable':
      return {
        error: new BusError('storage_unavailable', `the agentbus database server did not answer (${e.message}); agentbus reconnects by itself, so retry in a moment`, { retryable: true, cause: e }),
        unexpected: false,
      };
    case 'lock_owner_unknown':
      // The message names the lock file and the record; only a person can stop the older agentbus it belongs to.
      return {
        error: new BusError(
          'internal',
          `agentbus refuses to use its database${where}: ${e.message}. Retrying cannot help until that is done; tell the user, then restart the agent session.`,
          { retryable: false, cause: e },
        ),
        unexpected: true,
      };
    case 'unsupported_filesystem':
      return {
        error: new BusError(
          'internal',
          `agentbus refuses to use its database: ${e.message}. Retrying cannot help; tell the user, who must move the data directory and restart the agent session.`,
          { retryable: false, cause: e },
        ),
        unexpected: true,
      };
    default:
      return undefined;
  }
}
