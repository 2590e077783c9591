/**
 * `agentbus backup [path]`: a consistent copy while agents keep running (it
 * reads one snapshot and never blocks writers in WAL mode): SQLite's backup
 * in steps where the driver has it (Connection.copyTo: the progress line
 * counts while it runs), else one VACUUM INTO. The copy is written beside the
 * target and renamed into place only after it passed an integrity check, so a
 * target path never holds half a backup.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Database } from '../../../db/contract/database.js';
import { loadDriver } from '../../../db/open/select-driver.js';
import { databaseExists, databaseState, openAdminDatabase } from '../../admin-database.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import { serverBusRefusal } from '../../server-refusals.js';
import type { CliIo } from '../../cli-io.js';
import { formatBytes } from '../../format.js';
import { integrityProblems } from '../../../db/storage/integrity.js';
import { progressFor } from '../../progress.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus backup` takes (its spec.ts). */
export type BackupOptions = OptionsOf<typeof spec.options>;

/** `<data>/backups/agentbus-<UTC time>.db`. */
export function defaultBackupPath(dataDir: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  return join(dataDir, 'backups', `agentbus-${stamp}.db`);
}

export async function backupCommand(io: CliIo, args: readonly string[], options: BackupOptions): Promise<number> {
  const config = commandConfig(io, options);
  const onServer = serverBusRefusal(config, 'backup');
  if (onServer !== undefined) throw onServer;
  const { path, state } = databaseState(config);
  if (!databaseExists(state)) throw new CliError('failed', `nothing to back up: there is no database at ${path}`);
  const given = args[0];
  const target = given === undefined ? defaultBackupPath(config.data_directory, io.clock.now()) : resolve(io.cwd, given);
  if (target === path) throw new CliError('usage', `the backup path ${target} is the database itself; name another file`);
  if (existsSync(target) && !options.force) {
    throw new CliError('refused', `${target} already exists; choose another path or pass --force to overwrite it`);
  }
  if (given === undefined) {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  } else if (!existsSync(dirname(target))) {
    throw new CliError('failed', `the directory ${dirname(target)} does not exist; create it or choose another path`);
  }
  const partial = `${target}.partial-${process.pid}`;
  const progress = progressFor(io);
  const { db } = await openAdminDatabase(config, io);
  try {
    const protocol = db.capabilities.lockProtocol;
    const size = Number(db.pragma('page_count')) * Number(db.pragma('page_size'));
    const what = `backing up ${formatBytes(size)} from ${path} ...`;
    rmSync(partial, { force: true });
    if (db.copiesInSteps) {
      progress.step(what);
      await db.copyTo(partial, (copied, total) => progress.step(what, total > 0 ? copied / total : 1));
    } else {
      progress.blockingStep(what, size);
      db.run('VACUUM INTO ?', [partial]);
    }
    chmodSync(partial, 0o600);
    progress.blockingStep(`checking the copy's integrity ...`, size);
    const loaded = await loadDriver(db.capabilities.name);
    if (!loaded.ok) throw new CliError('failed', `cannot verify the copy: ${loaded.reason}`);
    // Nobody else knows the partial file, so opening it directly cannot meet another process's locks.
    const copy = new Database(loaded.driver.open(partial, { busyTimeoutMs: 5_000 }));
    let problems: string[];
    try {
      problems = integrityProblems(copy);
    } finally {
      copy.close();
    }
    if (problems.length > 0) {
      throw new CliError('failed', `the copy failed its integrity check (${problems.slice(0, 3).join('; ')}); nothing was written to ${target}`);
    }
    renameSync(partial, target);
    progress.done();
    io.stdout.write(`backed up ${path} to ${target} (${formatBytes(statSync(target).size)}, ${protocol} lock protocol, integrity ok)\n`);
    return 0;
  } finally {
    progress.done();
    rmSync(partial, { force: true });
    db.close();
  }
}
