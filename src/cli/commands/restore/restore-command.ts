/**
 * `agentbus restore <backup>`: puts a backup (from `agentbus backup`, or the
 * automatic one before a schema upgrade) in place of the database, with the
 * guards of `convert`:
 * 1. the backup is copied beside the database and the copy is checked: an
 *    agentbus database, of a schema this agentbus can open, integrity ok; the
 *    backup file itself is only read;
 * 2. under the set-up lock (no agentbus process can open the database
 *    meanwhile) it refuses while any process has the database open
 *    (src/db/lock-records/file-holders.ts);
 * 3. the current database is kept aside in `<data>/backups/` with its -wal and
 *    rollback journal (they may hold committed data), the -shm and the lock
 *    files, which only describe the old file, are removed, and the checked
 *    copy is renamed into place;
 * 4. the restored file is opened through the normal path when its driver runs
 *    here (migrating an older schema).
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Database } from '../../../db/contract/database.js';
import type { Driver, LockProtocol } from '../../../db/contract/driver.js';
import { readFileState } from '../../../db/storage/file-header.js';
import { integrityProblems } from '../../../db/storage/integrity.js';
import { appliedMigrations, defaultMigrationsDir, loadMigrations, pendingMigrations } from '../../../db/open/migrations.js';
import { databasePath, openDatabase, prepareDataDir } from '../../../db/open/open-database.js';
import { openerRegistryDir } from '../../../db/lock-records/opener-registry.js';
import { adminMarkerDir, lockTablePath } from '../../../db/lock-records/portable-lock-files.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';
import { withSetupLock } from '../../../db/open/setup-lock.js';
import { otherProtocol } from '../../../db/lock-records/lock-protocol.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import { serverBusRefusal } from '../../server-refusals.js';
import type { CliIo } from '../../cli-io.js';
import * as messages from './messages.js';
import { formatBytes } from '../../format.js';
import { progressFor } from '../../progress.js';
import { refuseWhileHeld } from '../../refuse-while-held.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus restore` takes (its spec.ts). */
export type RestoreOptions = OptionsOf<typeof spec.options>;

/** How long to wait for an agentbus process that is opening the database right now. */
const SETUP_WAIT_MS = 10_000;

/** A driver that can read the copy: its own protocol's, else the other (nobody else has the copy open). */
async function readerFor(protocol: LockProtocol): Promise<Driver> {
  const own = await loadDriver(DRIVER_FOR_PROTOCOL[protocol]);
  if (own.ok) return own.driver;
  const other = await loadDriver(DRIVER_FOR_PROTOCOL[otherProtocol(protocol)]);
  if (other.ok) return other.driver;
  throw new CliError('failed', messages.noDriver(own.reason, other.reason));
}

/** Checks the copy; throws `failed` saying why it must not be restored. */
function checkCopy(copy: string, backup: string, reader: Driver): { schemaVersion: number } {
  const db = new Database(reader.open(copy, { busyTimeoutMs: 5_000 }));
  try {
    const problems = integrityProblems(db);
    if (problems.length > 0) {
      throw new CliError('failed', messages.failsIntegrity(backup, problems));
    }
    const applied = appliedMigrations(db);
    try {
      // Throws for a backup of a newer agentbus, or one whose migrations differ from ours.
      pendingMigrations(applied, loadMigrations(defaultMigrationsDir()));
    } catch (error) {
      throw new CliError('failed', messages.cannotRestore(backup, (error as Error).message));
    }
    return { schemaVersion: applied.at(-1)?.version ?? 0 };
  } finally {
    db.close();
  }
}

/** Moves the database and the files holding its data aside; removes the ones that only describe the old file. */
function setCurrentAside(path: string, aside: string): void {
  if (existsSync(path)) renameSync(path, aside);
  // -wal and a rollback journal may hold committed (or to-be-undone) data: they go with it, named so SQLite finds them.
  for (const suffix of ['-wal', '-journal']) {
    if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${aside}${suffix}`);
  }
  rmSync(`${path}-shm`, { force: true });
  rmSync(lockTablePath(path), { force: true });
  // Whatever is left in these belongs to dead processes (checked above).
  for (const dir of [adminMarkerDir(path), openerRegistryDir(path)]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) unlinkSync(join(dir, name));
    rmdirSync(dir);
  }
}

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-');
}

/**
 * Under the set-up lock and only while no process has the database open: the
 * current file is set aside (kept as `aside`) and the checked copy renamed into
 * its place. True when there was a database to replace.
 */
function swapIn(io: CliIo, path: string, dataDir: string, copy: string, aside: string): boolean {
  let replaced = false;
  try {
    withSetupLock(path, SETUP_WAIT_MS, () => {
      refuseWhileHeld(io, path, 'restore');
      replaced = existsSync(path);
      mkdirSync(join(dataDir, 'backups'), { recursive: true, mode: 0o700 });
      setCurrentAside(path, aside);
      renameSync(copy, path);
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'setup_timeout') throw new CliError('refused', `${(error as Error).message}; nothing changed`);
    throw error;
  }
  return replaced;
}

/** Opens the restored file through the normal path where its driver runs (that also migrates an older schema); what to add to the report line. */
async function openRestored(io: CliIo, dataDir: string, protocol: LockProtocol, schemaVersion: number, progress: ReturnType<typeof progressFor>, bytes: number): Promise<string> {
  const driver = await loadDriver(DRIVER_FOR_PROTOCOL[protocol]);
  if (!driver.ok) return `; the next \`agentbus mcp\` on this Node converts it to the portable protocol (${driver.reason})`;
  progress.blockingStep('opening the restored database ...', bytes);
  const { db, migrations } = await openDatabase({ dataDir, driver: DRIVER_FOR_PROTOCOL[protocol], now: () => io.clock.now() });
  db.close();
  return migrations.applied.length > 0 ? `, upgraded from schema v${schemaVersion} to v${migrations.version}` : '';
}

export async function restoreCommand(io: CliIo, args: readonly string[], options: RestoreOptions): Promise<number> {
  const given = args[0];
  if (given === undefined) throw new CliError('usage', messages.NO_BACKUP_GIVEN);
  const config = commandConfig(io, options);
  const onServer = serverBusRefusal(config, 'restore');
  if (onServer !== undefined) throw onServer;
  const backup = resolve(io.cwd, given);
  const dataDir = prepareDataDir(config.data_directory);
  const path = databasePath(dataDir);
  if (!existsSync(backup)) throw new CliError('failed', messages.noSuchFile(backup, join(dataDir, 'backups')));
  if (existsSync(path) && realpathSync(backup) === realpathSync(path)) throw new CliError('usage', messages.isTheDatabase(backup));
  const state = readFileState(backup);
  if (state.kind === 'foreign') throw new CliError('failed', messages.foreignFile(state.reason));
  if (state.kind !== 'agentbus') throw new CliError('failed', messages.emptyFile(backup));
  if (existsSync(`${backup}-wal`)) {
    throw new CliError('failed', messages.walBeside(backup));
  }

  const progress = progressFor(io);
  const copy = `${path}.restoring-${process.pid}`;
  // Every step is one blocking call over the file.
  const bytes = statSync(backup).size;
  try {
    progress.blockingStep(`copying ${backup} (${formatBytes(bytes)}) ...`, bytes);
    copyFileSync(backup, copy);
    chmodSync(copy, 0o600);
    progress.blockingStep('checking the copy ...', bytes);
    const { schemaVersion } = checkCopy(copy, backup, await readerFor(state.protocol));

    const aside = join(dataDir, 'backups', `agentbus-${stamp(io.clock.now())}-replaced.db`);
    progress.blockingStep('checking that no process has the database open ...', bytes);
    const replaced = swapIn(io, path, dataDir, copy, aside);
    const opened = await openRestored(io, dataDir, state.protocol, schemaVersion, progress, bytes);
    progress.done();
    io.stdout.write(`${messages.restored(backup, path, state.protocol, opened, replaced ? aside : undefined)}\n`);
    return 0;
  } finally {
    progress.done();
    rmSync(copy, { force: true });
  }
}
