/** The guard of `convert` and `restore`: nobody else may have the database open. */
import { describeHolders, surveyHolders } from '../db/lock-records/file-holders.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/**
 * Throws `refused` naming the processes that have the database open. Call it
 * holding the set-up lock. Warns when this system cannot list open files (no
 * /proc, no lsof): then only agentbus processes (by their registry entries)
 * and SQLite's own locks guard.
 */
export function refuseWhileHeld(io: CliIo, path: string, command: string): void {
  const { holders, openFilesChecked } = surveyHolders(path);
  if (holders.length > 0) {
    throw new CliError('refused', `${path} is open in ${describeHolders(holders)}; stop those processes (close the harness sessions) and run ${command} again; nothing changed`);
  }
  if (!openFilesChecked) {
    io.stderr.write(`agentbus: this system has neither /proc nor lsof, so only agentbus processes can be seen; make sure no other program has ${path} open\n`);
  }
}
