/**
 * `agentbus convert --to portable|posix`: moves a database to the other lock
 * protocol, offline (`--to postgres URL` copies it into PostgreSQL instead:
 * to-postgres.ts). The two protocols must never meet on one file, so this
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
import { convertFileProtocol } from '../../../db/open/convert-protocol.js';
import { DbError } from '../../../db/contract/db-error.js';
import type { Driver, LockProtocol } from '../../../db/contract/driver.js';
import { integrityProblems } from '../../../db/storage/integrity.js';
import { openDatabase } from '../../../db/open/open-database.js';
import { changeDriverSetting, DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';
import { withSetupLock } from '../../../db/open/setup-lock.js';
import { databaseExists, databaseState } from '../../admin-database.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import { serverBusRefusal } from '../../server-refusals.js';
import * as messages from './messages.js';
import { convertToPostgres } from './to-postgres.js';
import type { CliIo } from '../../cli-io.js';
import { progressFor } from '../../progress.js';
import { refuseWhileHeld } from '../../refuse-while-held.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus convert` takes (its spec.ts). */
export type ConvertOptions = OptionsOf<typeof spec.options>;

const PROTOCOLS: readonly LockProtocol[] = ['posix', 'portable'];
/** How long to wait for an agentbus process that is opening the database right now. */
const SETUP_WAIT_MS = 10_000;

function targetProtocol(to: string | undefined): LockProtocol {
  if (to === undefined || !(PROTOCOLS as readonly string[]).includes(to)) {
    throw new CliError('usage', messages.badTarget(to));
  }
  return to as LockProtocol;
}

/** Turns the storage layer's refusals into the CLI's exit codes. */
function asCliError(error: unknown): unknown {
  if (!(error instanceof DbError)) return error;
  if (error.code === 'busy' || error.code === 'in_use' || error.code === 'setup_timeout') return new CliError('refused', error.message);
  return new CliError('failed', error.message);
}

export async function convertCommand(io: CliIo, args: readonly string[], options: ConvertOptions): Promise<number> {
  if (options.to === 'postgres') return convertToPostgres(io, args, options);
  const to = targetProtocol(options.to);
  if (args.length > 0) throw new CliError('usage', messages.urlWithoutPostgres(to));
  const config = commandConfig(io, options);
  const onServer = serverBusRefusal(config, 'convert');
  if (onServer !== undefined) throw onServer;
  const { path: given, state } = databaseState(config);
  if (!databaseExists(state)) throw new CliError('failed', messages.noDatabase(given));
  if (state.kind === 'foreign') throw new CliError('failed', messages.foreignFile(state.reason));
  if (state.kind !== 'agentbus') throw new CliError('failed', messages.emptyFile(given));
  const from = state.protocol;
  if (from === to) {
    io.stdout.write(`${messages.alreadyConverted(given, to)}\n`);
    return 0;
  }
  const path = realpathSync(given);
  const toName = DRIVER_FOR_PROTOCOL[to];
  const target = await loadDriver(toName);
  if (!target.ok) {
    throw new CliError('failed', messages.targetDriverMissing(to, toName, target.reason));
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

    progress.blockingStep(messages.verifyingStep(toName), bytes);
    const reopened = await openDatabase({ dataDir: config.data_directory, driver: toName, now: () => io.clock.now() });
    let problems: string[];
    try {
      problems = integrityProblems(reopened.db);
    } finally {
      reopened.db.close();
    }
    if (problems.length > 0) throw new CliError('failed', messages.failsIntegrity(path, problems));
    progress.done();
    const setting = config.driver !== 'auto' && config.driver !== toName ? changeDriverSetting(config.driverSource, 'auto') : undefined;
    io.stdout.write(`${messages.converted(path, from, to, toName, setting)}\n`);
    return 0;
  } finally {
    progress.done();
  }
}
