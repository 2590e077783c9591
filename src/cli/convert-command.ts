/**
 * `agentbus convert --to portable|posix`: moves a database to the other lock
 * protocol, offline. The two protocols must never meet on one file, so this
 * refuses while any process has it open:
 * - on Linux, /proc/<pid>/fd is scanned for the database, its -wal, -shm and
 *   -locks files;
 * - everywhere (and as a second guard on Linux), leaving WAL mode needs an
 *   exclusive lock that SQLite refuses while another connection is open, and
 *   the portable lock table must have no live owner.
 * Then the WAL is checkpointed (TRUNCATE) and the file left in rollback mode,
 * the header marker (application_id) is rewritten by the target protocol's
 * driver, and the file is opened through the normal path with that driver and
 * integrity-checked.
 */
import { realpathSync, rmSync } from 'node:fs';
import { Database } from '../db/database.js';
import type { LockProtocol } from '../db/driver.js';
import { APPLICATION_ID, readFileState } from '../db/file-header.js';
import { openDatabase } from '../db/open-database.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../db/select-driver.js';
import { databaseExists, databaseState } from './admin-database.js';
import { commandConfig } from './cli-config.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { integrityProblems } from './integrity.js';
import { surveyLocks } from './lock-files.js';
import { processesHolding } from './open-files.js';
import { progressFor } from './progress.js';

const PROTOCOLS: readonly LockProtocol[] = ['posix', 'portable'];

function targetProtocol(flags: Record<string, unknown>): LockProtocol {
  const to = flags.to;
  if (typeof to !== 'string' || !(PROTOCOLS as readonly string[]).includes(to)) {
    throw new CliError('usage', `--to must be portable or posix (got ${to === undefined ? 'nothing' : JSON.stringify(to)}), e.g. agentbus convert --to portable`);
  }
  return to as LockProtocol;
}

function sideFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-locks`];
}

/** Throws `refused` naming the processes that have the database open. */
function refuseWhileOpen(path: string, now: number): void {
  const holders = processesHolding(sideFiles(path));
  if (holders !== undefined && holders.length > 0) {
    const list = holders.map((h) => `pid ${h.pid} (${h.command || 'unknown command'})`).join(', ');
    throw new CliError('refused', `${path} is open in ${list}; stop those agentbus processes (close the harness sessions) and run convert again; nothing changed`);
  }
  const live = surveyLocks(path, now).entries.filter((e) => e.alive);
  if (live.length > 0) {
    throw new CliError('refused', `${path} is in use (a live ${live[0]?.kind.replace('_', ' ')} of pid ${live[0]?.pid}); stop every agentbus process and run convert again; nothing changed`);
  }
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
  const fromName = DRIVER_FOR_PROTOCOL[from];
  const toName = DRIVER_FOR_PROTOCOL[to];
  const target = await loadDriver(toName);
  if (!target.ok) {
    throw new CliError('failed', `converting to ${to} needs the ${toName} driver, which cannot run here: ${target.reason}; nothing changed`);
  }
  const progress = progressFor(io);
  try {
    progress.step('checking that no process has the database open ...');
    refuseWhileOpen(path, io.clock.now());

    progress.step(`opening with the ${fromName} driver ...`);
    const { db } = await openDatabase({ dataDir: config.data_directory, driver: fromName, busyTimeoutMs: 1_000, now: () => io.clock.now() });
    try {
      progress.step('checking integrity ...');
      const problems = integrityProblems(db);
      if (problems.length > 0) {
        throw new CliError('failed', `${path} fails its integrity check (${problems.slice(0, 3).join('; ')}); restore a backup before converting; nothing changed`);
      }
      progress.step('checkpointing the WAL ...');
      const checkpoint = db.get<{ busy: number }>('PRAGMA wal_checkpoint(TRUNCATE)');
      if (checkpoint !== undefined && checkpoint.busy !== 0) {
        throw new CliError('refused', `another connection is using ${path} (the WAL checkpoint could not finish); stop every agentbus process and run convert again; nothing changed`);
      }
      let mode: unknown;
      try {
        mode = db.pragma('journal_mode = DELETE');
      } catch {
        mode = undefined;
      }
      if (mode !== 'delete') {
        throw new CliError('refused', `another connection is using ${path} (SQLite refused to leave WAL mode); stop every agentbus process and run convert again; nothing changed`);
      }
    } finally {
      db.close();
    }
    // The -shm index belongs to the old protocol's processes; nobody holds it (checked above).
    refuseWhileOpen(path, io.clock.now());
    rmSync(`${path}-shm`, { force: true });
    rmSync(`${path}-wal`, { force: true });

    progress.step(`rewriting the header with the ${toName} driver ...`);
    // Rollback mode: the write lands in the main file's header, where readFileState looks.
    const raw = new Database(target.driver.open(path, { busyTimeoutMs: 1_000 }));
    try {
      raw.exec(`PRAGMA application_id = ${APPLICATION_ID[to]}`);
    } finally {
      raw.close();
    }
    const after = readFileState(path);
    if (after.kind !== 'agentbus' || after.protocol !== to) {
      throw new CliError('failed', `the header of ${path} does not read as ${to} after the rewrite; restore a backup`);
    }

    progress.step(`verifying with the ${toName} driver ...`);
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
        (config.driver !== 'auto' && config.driver !== toName ? `: set driver (or AGENTBUS_DRIVER) to ${toName} or auto` : '') +
        '\n',
    );
    return 0;
  } finally {
    progress.done();
  }
}
