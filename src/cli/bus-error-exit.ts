/**
 * A bus operation's failure as a console command's error: the bus's message
 * (it names the field and the fix) with the exit code a script can act on.
 * Refusals that changed nothing (rate limit, inspection hook, capacity) exit
 * 3; a bad value exits 2; the rest exit 1.
 */
import { BusError, type BusErrorCode } from '../bus/bus-error.js';
import { CliError, type CliErrorCode } from './cli-error.js';

const EXIT_OF: Readonly<Record<BusErrorCode, CliErrorCode>> = {
  validation: 'usage',
  not_registered: 'failed',
  not_found: 'failed',
  conflict: 'refused',
  rate_limited: 'refused',
  inspection_rejected: 'refused',
  inspection_unavailable: 'refused',
  capacity_exhausted: 'refused',
  internal: 'failed',
  database_corrupt: 'failed',
  disk_full: 'failed',
  permission_denied: 'failed',
  database_in_use: 'refused',
  storage_unavailable: 'failed',
};

/** Runs `operation`, turning a BusError into a CliError with its code in the message (`rate_limited: ...`). */
export async function asCliError<T>(operation: () => T | Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof BusError)) throw error;
    throw new CliError(EXIT_OF[error.code], `${error.code}: ${error.message}`);
  }
}
