/**
 * Opening the agentbus database: data directory checks, driver selection by
 * the file's lock protocol, creation, pragmas, and migrations, all under the
 * set-up lock so that concurrent openers see one outcome.
 */
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Database } from './database.js';
import { DbError } from './db-error.js';
import type { Driver, DriverName, LockProtocol } from './driver.js';
import { APPLICATION_ID, readFileState, type FileState } from './file-header.js';
import {
  applyMigration,
  appliedMigrations,
  defaultMigrationsDir,
  loadMigrations,
  pendingMigrations,
  type MigrationReport,
} from './migrations.js';
import { DRIVER_FOR_PROTOCOL, loadDriver, type DriverChoice } from './select-driver.js';
import { withSetupLock } from './setup-lock.js';

export const DATABASE_FILE = 'agentbus.db';
const BACKUPS_KEPT = 3;

export interface OpenDatabaseOptions {
  /** The data directory; created (0700) when missing. */
  readonly dataDir: string;
  /** Which driver to use; `auto` follows an existing file's protocol. */
  readonly driver: DriverChoice;
  /** How long a statement waits on another process's lock. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** How long to wait for another process creating or upgrading the file. Default 60 s. */
  readonly setupTimeoutMs?: number;
  /** Where the migration files live; defaults to the package's `sql/`. */
  readonly migrationsDir?: string;
  /** The clock, in milliseconds since the epoch. */
  readonly now?: () => number;
}

export interface OpenedDatabase {
  readonly db: Database;
  /** True when this call created the database file. */
  readonly created: boolean;
  readonly migrations: MigrationReport;
}

/** The database path inside a data directory. */
export function databasePath(dataDir: string): string {
  return join(resolve(dataDir), DATABASE_FILE);
}

/** Creates the data directory if needed and proves this user can use it. */
export function prepareDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DbError(
      'permission',
      `cannot create the data directory ${dir} (${code}): its parent must be writable by this user, or set AGENTBUS_DATA_DIR to a directory you own`,
      { error },
    );
  }
  if (!statSync(dir).isDirectory()) {
    throw new DbError('permission', `the data directory ${dir} is not a directory; set AGENTBUS_DATA_DIR to a directory`);
  }
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new DbError(
      'permission',
      `the data directory ${dir} is not writable by this user: agentbus needs read, write and search permission (chmod u+rwx ${dir}), or set AGENTBUS_DATA_DIR to a directory you own`,
      { error },
    );
  }
  return dir;
}

function otherProtocol(protocol: LockProtocol): LockProtocol {
  return protocol === 'posix' ? 'portable' : 'posix';
}

function protocolDriverHint(protocol: LockProtocol): string {
  return DRIVER_FOR_PROTOCOL[protocol] === 'native'
    ? 'AGENTBUS_DRIVER=native (needs Node >= 22.13)'
    : 'AGENTBUS_DRIVER=wasm';
}

async function requireDriver(name: DriverName, why: string, whatToDo: string): Promise<Driver> {
  const result = await loadDriver(name);
  if (!result.ok) throw new DbError('driver_unavailable', `${why}, but ${result.reason}; ${whatToDo}`);
  return result.driver;
}

/** Picks the driver for the file as it looks now; refuses a protocol mismatch. */
async function chooseDriver(path: string, state: FileState, choice: DriverChoice): Promise<Driver> {
  // A foreign-looking header read outside the set-up lock may be another
  // process's half-written first page; the verdict is given under the lock.
  if (state.kind === 'agentbus') {
    const wanted = DRIVER_FOR_PROTOCOL[state.protocol];
    if (choice !== 'auto' && choice !== wanted) {
      throw new DbError(
        'protocol_mismatch',
        `${path} uses the ${state.protocol} lock protocol, which the ${choice} driver must never share: use ${protocolDriverHint(state.protocol)}, or convert the file with \`agentbus convert --to ${otherProtocol(state.protocol)}\` while no agentbus process has it open`,
      );
    }
    const other = otherProtocol(state.protocol);
    return requireDriver(
      wanted,
      `${path} uses the ${state.protocol} lock protocol, which needs the ${wanted} driver`,
      `run agentbus where that driver works, or convert the file there with \`agentbus convert --to ${other}\``,
    );
  }
  if (choice !== 'auto') {
    return requireDriver(choice, `AGENTBUS_DRIVER=${choice} was asked for`, `use AGENTBUS_DRIVER=auto to pick a driver that runs here`);
  }
  const native = await loadDriver('native');
  if (native.ok) return native.driver;
  return requireDriver('wasm', `no driver can run here (${native.reason})`, 'reinstall agentbus with `npm ci`');
}

function checkProtocol(path: string, state: FileState, driver: Driver): void {
  if (state.kind === 'agentbus' && state.protocol !== driver.capabilities.lockProtocol) {
    throw new DbError(
      'protocol_mismatch',
      `${path} was created with the ${state.protocol} lock protocol while this process waited; restart to use ${protocolDriverHint(state.protocol)}`,
    );
  }
  if (state.kind === 'foreign') throw new DbError('foreign_file', `refusing to open ${state.reason}`);
}

function initialiseNewFile(db: Database, protocol: LockProtocol): void {
  // auto_vacuum must be set before the first page is written; application_id
  // is that first write, made in rollback-journal mode so it lands in the main
  // file's header, where readFileState looks.
  db.exec('PRAGMA page_size = 4096');
  db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  db.exec(`PRAGMA application_id = ${APPLICATION_ID[protocol]}`);
}

function configureConnection(db: Database): void {
  // WAL only where the driver can share its index across processes; a driver
  // without that keeps (or returns the file to) a rollback journal.
  const wanted = db.capabilities.wal ? 'wal' : 'delete';
  const mode = db.pragma(`journal_mode = ${wanted.toUpperCase()}`);
  if (mode !== wanted) {
    throw new DbError(
      'error',
      `${db.path}: PRAGMA journal_mode=${wanted.toUpperCase()} answered ${String(mode)}; another process may hold the file in another journal mode, or the file system may not support it`,
    );
  }
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
}

function backupBeforeUpgrade(db: Database, dataDir: string, fromVersion: number, now: number): string {
  const dir = join(dataDir, 'backups');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  const path = join(dir, `agentbus-${stamp}-v${fromVersion}.db`);
  db.run('VACUUM INTO ?', [path]);
  const old = readdirSync(dir)
    .filter((f) => /^agentbus-.*-v\d+\.db$/.test(f))
    .sort()
    .slice(0, -BACKUPS_KEPT);
  for (const f of old) rmSync(join(dir, f), { force: true });
  return path;
}

/**
 * Opens the agentbus database in `dataDir`, creating and migrating it as
 * needed. A refused file (foreign, other protocol, newer schema, edited
 * migration) is left byte-identical.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  const now = options.now ?? Date.now;
  const dataDir = prepareDataDir(options.dataDir);
  const path = databasePath(dataDir);
  const migrations = loadMigrations(options.migrationsDir ?? defaultMigrationsDir());
  const driver = await chooseDriver(path, readFileState(path), options.driver);

  return withSetupLock(path, options.setupTimeoutMs ?? 60_000, () => {
    const state = readFileState(path);
    checkProtocol(path, state, driver);
    const created = state.kind === 'missing' || state.kind === 'empty';
    const db = new Database(driver.open(path, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000 }));
    try {
      if (created) {
        initialiseNewFile(db, driver.capabilities.lockProtocol);
        // Messages are private to this user; SQLite gives -wal and -shm the main file's mode.
        chmodSync(path, 0o600);
      }
      const applied = appliedMigrations(db);
      const pending = pendingMigrations(applied, migrations);
      configureConnection(db);
      const fromVersion = applied.at(-1)?.version ?? 0;
      const backupPath =
        pending.length > 0 && applied.length > 0 ? backupBeforeUpgrade(db, dataDir, fromVersion, now()) : undefined;
      const done: number[] = [];
      for (const migration of pending) {
        if (applyMigration(db, migration, now())) done.push(migration.version);
      }
      const version = Math.max(fromVersion, ...pending.map((m) => m.version));
      return { db, created, migrations: { applied: done, version, backupPath } };
    } catch (error) {
      db.close();
      throw error;
    }
  });
}
