/**
 * `agentbus convert --to portable|posix`: moves a database to the other lock
 * protocol, offline. The two protocols must never meet on one file, so this
 * refuses while any process has it open (src/db/lock-records/file-holders.ts: agentbus
 * connections by their registry entries on every platform, any process by
 * its open files through /proc or lsof, live wasm connections by the lock
 * table), and holds the set-up lock throughout, so no agentbus process can
 * open the file meanwhile. The steps (integrity, checkpoint, header rewrite)
 * are src/db/open/convert-protocol.ts, the same ones a Node 20 `agentbus mcp` runs
 * when it meets a posix file; then the file is opened through the normal path
 * with the target driver and integrity-checked.
 */
import { realpathSync, statSync } from 'node:fs';
import { convertFileProtocol } from '../db/open/convert-protocol.js';
import { DbError } from '../db/contract/db-error.js';
import type { Driver, LockProtocol } from '../db/contract/driver.js';
import { integrityProblems } from '../db/storage/integrity.js';
import { openDatabase } from '../db/open/open-database.js';
import { changeDriverSetting, DRIVER_FOR_PROTOCOL, loadDriver } from '../db/open/select-driver.js';
import { withSetupLock } from '../db/open/setup-lock.js';
import { databaseExists, databaseState } from './admin-database.js';
import { commandConfig } from './cli-config.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { progressFor } from './progress.js';
import { refuseWhileHeld } from './refuse-while-held.js';

const PROTOCOLS: readonly LockProtocol[] = ['posix', 'portable'];
/** How long to wait for an agentbus process that is opening the database right now. */
const SETUP_WAIT_MS = 10_000;

function targetProtocol(flags: Record<string, unknown>): LockProtocol {
  const to = flags.to;
  if (typeof to !== 'string' || !(PROTOCOLS as readonly string[]).includes(to)) {
    throw new CliError('usage', `--to must be portable or posix (got ${to === undefined ? 'nothing' : JSON.stringify(to)}), e.g. agentbus convert --to portable`);
  }
  return to as LockProtocol;
}

/** Turns the storage layer's refusals into the CLI's exit codes. */
function asCliError(error: unknown): unknown {
  if (!(error instanceof DbError)) return error;
  if (error.code === 'busy' || error.code === 'in_use' || error.code === 'setup_timeout') return new CliError('refused', error.message);
  return new CliError('failed', error.message);
}

export async function convertCommand(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  const to = targetProtocol(flags);
  const config = commandConfig(io, flags);
  const { path: given, state } = databaseState(config);
  if (!databaseExists(state)) throw new CliError('failed', `nothing to convert: there is no database at ${given}`);
  if (state.kind === 'foreign') throw new CliError('failed', `refusing to convert: ${state.reason}`);
  if (state.kind !== 'agentbus') throw new CliError('failed', `nothing to convert: ${given} is empty`);
  const from = state.protocol;
  if (from === to) {
    io.stdout.write(`${given} already uses the ${to} lock protocol; nothing to do\n`);
    return 0;
  }
  const path = realpathSync(given);
  const toName = DRIVER_FOR_PROTOCOL[to];
  const target = await loadDriver(toName);
  if (!target.ok) {
    throw new CliError('failed', `converting to ${to} needs the ${toName} driver, which cannot run here: ${target.reason}; nothing changed`);
  }
  // The old protocol's driver reads the file when it runs here (its locks are a
  // second guard); otherwise the target's, with nobody on the file.
  const source = await loadDriver(DRIVER_FOR_PROTOCOL[from]);
  const reader: Driver = source.ok ? source.driver : target.driver;
  const progress = progressFor(io);
  // Every step is one blocking call over the file.
  const bytes = statSync(path).size;
  try {
    progress.blockingStep('checking that no process has the database open ...', bytes);
    try {
      withSetupLock(path, SETUP_WAIT_MS, () => {
        refuseWhileHeld(io, path, 'convert');
        convertFileProtocol(path, to, reader, target.driver, { onStep: (step) => progress.blockingStep(step, bytes) });
      });
    } catch (error) {
      throw asCliError(error);
    }

    progress.blockingStep(`verifying with the ${toName} driver ...`, bytes);
    const reopened = await openDatabase({ dataDir: config.data_directory, driver: toName, now: () => io.clock.now() });
    let problems: string[];
    try {
      problems = integrityProblems(reopened.db);
    } finally {
      reopened.db.close();
    }
    if (problems.length > 0) throw new CliError('failed', `${path} fails its integrity check after converting (${problems.slice(0, 3).join('; ')})`);
    progress.done();
    io.stdout.write(
      `converted ${path} from the ${from} to the ${to} lock protocol (integrity ok); agentbus now opens it with the ${toName} driver` +
        (config.driver !== 'auto' && config.driver !== toName ? `: ${changeDriverSetting(config.driverSource, 'auto')}` : '') +
        '\n',
    );
    return 0;
  } finally {
    progress.done();
  }
}
