/**
 * Opening the agentbus database: data directory checks, driver selection by
 * the file's lock protocol, creation, pragmas, and migrations, all under the
 * set-up lock so that concurrent openers see one outcome.
 */
import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, truncateSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listBackups, restoreSteps } from '../storage/backups.js';
import { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';
import type { Connection, Driver, DriverName, LockProtocol, SqliteCapabilities } from '../contract/driver.js';
import { APPLICATION_ID, readFileState, type FileState } from '../storage/file-header.js';
import {
  applyMigration,
  appliedMigrations,
  defaultMigrationsDir,
  loadMigrations,
  pendingMigrations,
  type MigrationReport,
} from './migrations.js';
import { convertFileProtocol } from './convert-protocol.js';
import { describeHolders, surveyHolders } from '../lock-records/file-holders.js';
import { lostDatabaseMessage, lostSchemaMessage } from '../storage/lost-database.js';
import { openSteps, type OpenStep } from './open-plan.js';
import { registerOpener } from '../lock-records/opener-registry.js';
import { RegisteredConnection } from './registered-connection.js';
import {
  changeDriverSetting,
  describeDriverSetting,
  DRIVER_FOR_PROTOCOL,
  loadDriver,
  type DriverChoice,
  type DriverChoiceSource,
} from './select-driver.js';
import { isCertainlyDead, parseProcessIdentity } from '../processes/process-identity.js';
import { setupLockDir, withSetupLock } from './setup-lock.js';
import { refuseUnsupportedFileSystem } from '../storage/file-system-kind.js';
import { permissionAdvice, storageError } from '../storage/storage-error.js';
import { WAL_SIZE_LIMIT_BYTES } from '../contract/wal-size-limit.js';
import {
  busyAtOpenMessage,
  cannotCreateDataDirMessage,
  databaseUnusableMessage,
  dataDirNotDirectoryMessage,
  dataDirParentAdvice,
  dataDirUnusableMessage,
  driverCannotRunMessage,
  nativeNeededMessage,
  noDriverMessage,
  RUN_ON_NODE_22,
  settingAsksFor,
  cannotOpenMessage,
  convertUnseenMessage,
  convertWhileHeldMessage,
  damagedMessage,
  danglingDataDirMessage,
  driverMissingMessage,
  journalModeMessage,
  lostInUseMessage,
  noWalMessage,
  protocolChangedMessage,
  protocolMismatchMessage,
  REINSTALL,
} from './open-messages.js';

export { lostDatabaseMessage } from '../storage/lost-database.js';

export const DATABASE_FILE = 'agentbus.db';
const BACKUPS_KEPT = 3;

export interface OpenDatabaseOptions {
  /** The data directory; created (0700) when missing. */
  readonly dataDir: string;
  /** Which driver to use; `auto` follows an existing file's protocol. */
  readonly driver: DriverChoice;
  /** Where `driver` came from (Config.driverSource), so errors name the setting to change. Default: AGENTBUS_DRIVER. */
  readonly driverSource?: DriverChoiceSource;
  /**
   * When the file is posix and this process can use only the portable
   * protocol (no node:sqlite, or driver wasm asked for): convert it, if no
   * process has it open, instead of refusing. `agentbus mcp` sets it; admin
   * commands do not, so that `status` never changes a file.
   */
  readonly convertWhenOnlyPortable?: boolean;
  /** How long a statement waits on another process's lock. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** How long to wait for another process creating or upgrading the file. Default 60 s. */
  readonly setupTimeoutMs?: number;
  /** Where the migration files live; defaults to the package's `sql/`. */
  readonly migrationsDir?: string;
  /** The clock, in milliseconds since the epoch. */
  readonly now?: () => number;
  /**
   * A database that lost its content (lost-database.ts) becomes a new empty
   * bus instead of being refused: `agentbus reset` sets it, on a person's
   * confirmation. Nothing else may.
   */
  readonly replaceLost?: boolean;
}

export interface OpenedDatabase {
  readonly db: Database<SqliteCapabilities>;
  /** True when this call created the database file. */
  readonly created: boolean;
  readonly migrations: MigrationReport;
  /** Set when this call converted the file to the protocol of the only driver this process can use. */
  readonly converted?: { readonly from: LockProtocol; readonly to: LockProtocol };
}

/** The database path inside a data directory. */
export function databasePath(dataDir: string): string {
  return join(resolve(dataDir), DATABASE_FILE);
}

/** Where `path` points when it is a symbolic link to nothing; undefined otherwise. */
function danglingLinkTarget(path: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink() || existsSync(path)) return undefined;
    return resolve(dirname(path), readlinkSync(path));
  } catch {
    return undefined;
  }
}

/** Creates the data directory if needed and proves this user can use it. */
export function prepareDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const target = danglingLinkTarget(dir);
    if (target !== undefined) {
      throw new DbError(
        'cantopen',
        danglingDataDirMessage(dir, target),
        { error },
      );
    }
    const converted = storageError(error, dirname(dir));
    if (converted instanceof DbError && code !== 'EACCES' && code !== 'EPERM') throw converted;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? permissionAdvice(dir, code)
        : dataDirParentAdvice(code);
    throw new DbError('permission', cannotCreateDataDirMessage(dir, why), { error });
  }
  if (!statSync(dir).isDirectory()) {
    throw new DbError('permission', dataDirNotDirectoryMessage(dir));
  }
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') throw storageError(error, dir);
    throw new DbError('permission', dataDirUnusableMessage(permissionAdvice(dir, code)), { error });
  }
  return dir;
}

/**
 * Refuses, before SQLite sees them, database files this user cannot both read
 * and write: SQLite would open a read-only file read-only without a word and
 * fail every write later, and says only "unable to open database file" for
 * the rest.
 */
function checkFileAccess(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      if (code === 'EROFS') throw storageError(error, dirname(path));
      throw new DbError('permission', databaseUnusableMessage(permissionAdvice(file, code)), { error });
    }
  }
}

function refuseLostDatabase(path: string, dataDir: string, state: FileState): void {
  const message = lostDatabaseMessage(path, dataDir, state);
  if (message !== undefined) throw new DbError('corrupt', message);
}

/**
 * Moves a lost database's remains out of the way for a new empty bus, on a
 * person's say (`agentbus reset`): the file is emptied in place (never
 * unlinked) and a -wal and -shm of the lost content are removed, since
 * SQLite would otherwise replay the old frames into the new file. Refused
 * while any process has the file open.
 */
function clearLostDatabase(path: string): void {
  const { holders } = surveyHolders(path);
  if (holders.length > 0) {
    throw new DbError('in_use', lostInUseMessage(path, describeHolders(holders), holders.length > 1));
  }
  truncateSync(path, 0);
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
}

async function requireDriver(name: DriverName, why: string, whatToDo: string): Promise<Driver> {
  const result = await loadDriver(name);
  if (!result.ok) throw new DbError('driver_unavailable', driverCannotRunMessage(why, result.reason, whatToDo));
  return result.driver;
}

/** What an opener does with the file as it looked before the set-up lock. */
interface OpenPlan {
  /** The driver that opens (and, for a new file, creates) it. */
  readonly driver: Driver;
  /** Set when the file is posix and this process can speak only portable: convert it first, if nobody holds it. */
  readonly convertFrom?: {
    readonly protocol: LockProtocol;
    /** Why this process can speak only portable. */
    readonly why: string;
    /** What else would let it open the file as it is. */
    readonly otherwise: string;
  };
}

/** What the open knows when it carries out a step: the file and the setting. */
interface PlanInput {
  readonly path: string;
  /** The file's protocol, or `new`. */
  readonly file: LockProtocol | 'new';
  readonly choice: DriverChoice;
  readonly source: DriverChoiceSource;
}

/** Carries out a convert step: the portable driver must run; `lastReason` is why the file's own driver cannot. */
async function convertStep(input: PlanInput, because: 'setting' | 'no_native', lastReason: string): Promise<OpenPlan> {
  const asked = describeDriverSetting(input.choice, input.source);
  const portable = DRIVER_FOR_PROTOCOL.portable;
  if (because === 'setting') {
    const why = settingAsksFor(asked, portable);
    const driver = await requireDriver(portable, why, changeDriverSetting(input.source, 'auto'));
    return { driver, convertFrom: { protocol: 'posix', why, otherwise: changeDriverSetting(input.source, 'auto') } };
  }
  const driver = await requireDriver(portable, nativeNeededMessage(input.path, lastReason), REINSTALL);
  return { driver, convertFrom: { protocol: 'posix', why: lastReason, otherwise: RUN_ON_NODE_22 } };
}

/** The refusal a refuse step throws, saying why and what to change. */
async function refusal(input: PlanInput, because: Extract<OpenStep, { kind: 'refuse' }>['because'], reasons: readonly string[]): Promise<DbError> {
  const lastReason = reasons.at(-1) ?? '';
  const { path, file, choice, source } = input;
  const asked = describeDriverSetting(choice, source);
  if (file !== 'new' && because === 'protocol_mismatch') {
    const wanted = DRIVER_FOR_PROTOCOL[file];
    const autoFix = (await loadDriver(wanted)).ok ? changeDriverSetting(source, 'auto') : undefined;
    return new DbError('protocol_mismatch', protocolMismatchMessage(path, file, asked, choice as DriverName, wanted, autoFix));
  }
  if (file !== 'new' && because === 'driver_missing') return new DbError('driver_unavailable', driverMissingMessage(path, file, DRIVER_FOR_PROTOCOL[file], lastReason));
  if (because === 'setting_cannot_run') {
    const fix = `${changeDriverSetting(source, 'auto')} to pick a driver that runs here`;
    return new DbError('driver_unavailable', driverCannotRunMessage(settingAsksFor(asked, choice as DriverName), lastReason, fix));
  }
  return new DbError('driver_unavailable', noDriverMessage(reasons[0], lastReason));
}

/**
 * Picks the driver for the file as it looks now, by carrying out the steps of
 * src/db/open/open-plan.ts. A foreign-looking header read outside the set-up lock
 * may be another process's half-written first page: it is planned as a new
 * file, and the verdict is given under the lock.
 */
async function planOpen(path: string, state: FileState, choice: DriverChoice, source: DriverChoiceSource, convert: boolean): Promise<OpenPlan> {
  const input: PlanInput = { path, file: state.kind === 'agentbus' ? state.protocol : 'new', choice, source };
  // Why each driver tried so far cannot run here, in order: the messages of the later steps name them.
  const reasons: string[] = [];
  for (const step of openSteps(input.file, choice, convert)) {
    if (step.kind === 'convert') return convertStep(input, step.because, reasons.at(-1) ?? '');
    if (step.kind === 'refuse') throw await refusal(input, step.because, reasons);
    const loaded = await loadDriver(step.driver);
    if (loaded.ok) return { driver: loaded.driver };
    reasons.push(loaded.reason);
  }
  throw new Error('unreachable: every plan of open-plan.ts ends in convert or refuse');
}

/**
 * Converts a posix file for a process that can speak only portable, under
 * the set-up lock, or refuses naming who holds the file. No agentbus process
 * can open the file meanwhile: every opener takes the set-up lock and
 * registers its connection under it.
 */
function convertForThisProcess(path: string, plan: OpenPlan, busyTimeoutMs: number): void {
  const { holders, openFilesChecked } = surveyHolders(path);
  if (holders.length > 0) {
    throw new DbError('in_use', convertWhileHeldMessage(path, `${plan.convertFrom?.why}`, describeHolders(holders), holders.length > 1, `${plan.convertFrom?.otherwise}`));
  }
  if (!openFilesChecked) {
    // Only agentbus connections of this version are visible then; an older
    // one or another program could hold posix locks nobody here can see.
    throw new DbError('in_use', convertUnseenMessage(path, `${plan.convertFrom?.why}`, `${plan.convertFrom?.otherwise}`));
  }
  convertFileProtocol(path, 'portable', plan.driver, plan.driver, { busyTimeoutMs: Math.min(busyTimeoutMs, 1_000) });
}

/**
 * Opens `path` with `driver` and registers the connection (opener-registry.ts).
 * Call under the set-up lock: a conversion or restore then either sees the
 * connection or happens before it.
 */
function openRegisteredUnderLock(path: string, driver: Driver, busyTimeoutMs: number): Database<SqliteCapabilities> {
  const connection = driver.open(path, { busyTimeoutMs });
  let unregister: () => void;
  try {
    unregister = registerOpener(path, driver.capabilities.lockProtocol);
  } catch (error) {
    connection.close();
    throw error;
  }
  return new Database(new RegisteredConnection(connection, unregister));
}

/** True when a process that may still run holds the set-up lock of `path` (an owner not yet written counts as running). */
function setupLockHeld(path: string): boolean {
  const dir = setupLockDir(path);
  if (!existsSync(dir)) return false;
  let text: string;
  try {
    text = readFileSync(join(dir, 'owner'), 'utf8');
  } catch {
    return existsSync(dir);
  }
  const owner = parseProcessIdentity(text);
  return owner === undefined || !isCertainlyDead(owner);
}

/**
 * Opens an existing agentbus database for an inspection (doctor's integrity
 * check) without creating, migrating, or waiting for and clearing the set-up
 * lock, which doctor reports rather than touches. It is still safe against a
 * conversion or restore (which hold the set-up lock and then look at the
 * opener registry): the connection is registered first, and opened only if no
 * live process holds the set-up lock and the header still records this
 * driver's protocol. So either the converter sees the entry and refuses, or
 * the inspection sees the lock (or the changed header) and does not open.
 * Returns the reason instead of a database when it must not open now.
 */
export function openForInspection(path: string, driver: Driver, busyTimeoutMs = 5_000): Database<SqliteCapabilities> | string {
  const protocol = driver.capabilities.lockProtocol;
  const unregister = registerOpener(path, protocol);
  let opened: Database<SqliteCapabilities> | undefined;
  try {
    if (setupLockHeld(path)) return 'another agentbus process is creating, upgrading or converting the database right now; run doctor again in a moment';
    const state = readFileState(path);
    if (state.kind !== 'agentbus' || state.protocol !== protocol) {
      return `the file changed meanwhile (${state.kind === 'agentbus' ? `now ${state.protocol}` : state.kind}); run doctor again`;
    }
    opened = new Database(new RegisteredConnection(driver.open(path, { busyTimeoutMs }), unregister));
    return opened;
  } finally {
    // Not opened: the entry goes now; an open connection removes it when it closes.
    if (opened === undefined) unregister();
  }
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
  // Every process opens the file in WAL mode, so a driver that cannot share
  // the WAL index across processes would corrupt it for the others.
  if (!db.capabilities.wal) throw new DbError('driver_unavailable', noWalMessage(db.path, db.capabilities.name));
  const mode = db.pragma('journal_mode = WAL');
  if (mode !== 'wal') throw new DbError('error', journalModeMessage(db.path, mode));
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  // When readers keep the checkpointer from restarting the WAL it grows, and SQLite keeps the file at
  // its largest size for good; with a limit, the next restart truncates it back.
  db.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
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
  refuseUnknownDriver(options.driver);
  const dataDir = prepareDataDir(options.dataDir);
  refuseUnsupportedFileSystem(dataDir);
  try {
    return await openPrepared(options, dataDir);
  } catch (error) {
    // ENOSPC, EACCES, EROFS from a file the set-up lock or SQLite touches: say which and what to do.
    throw withNextStep(storageError(error, dataDir), dataDir);
  }
}

/**
 * An argument check for callers that bypass the config's validation (scripts,
 * fixtures): any other name would otherwise fall through to a file driver,
 * and a bus meant for a server would silently be a file.
 */
function refuseUnknownDriver(driver: string): void {
  if (driver === 'auto' || Object.values(DRIVER_FOR_PROTOCOL).includes(driver as DriverName)) return;
  throw new TypeError(`openDatabase: driver must be auto, native or wasm, not ${JSON.stringify(driver)}; a bus on a PostgreSQL server opens through database_url (open-postgres.ts)`);
}

/** SQLite's own words for a damaged file or an I/O failure at open, plus what a person should do next. */
function withNextStep(error: unknown, dataDir: string): unknown {
  if (!(error instanceof DbError) || error.sqliteCode === undefined) return error;
  const path = databasePath(dataDir);
  if (error.code === 'corrupt') {
    const newest = listBackups(dataDir)[0];
    const restore = newest === undefined ? 'restore a backup if you have one' : `restore the newest backup: ${restoreSteps(newest.path)}`;
    return new DbError('corrupt', damagedMessage(path, error.message, restore), {
      sqliteCode: error.sqliteCode,
      error,
    });
  }
  if (error.code === 'busy' || error.code === 'locked') {
    return new DbError(error.code, busyAtOpenMessage(path, error.message), { sqliteCode: error.sqliteCode, error });
  }
  if (error.code === 'error' || error.code === 'cantopen') {
    return new DbError(error.code, cannotOpenMessage(path, error.message), {
      sqliteCode: error.sqliteCode,
      error,
    });
  }
  return error;
}

/** The file as this opener leaves it under the set-up lock, before SQLite opens it. */
interface SettledFile {
  readonly state: FileState;
  /** Set when this opener converted the file. */
  readonly converted?: OpenedDatabase['converted'];
}

/**
 * Under the set-up lock: a lost database is refused (or cleared, for reset),
 * a foreign file refused, and a posix file converted when the plan says so;
 * 'replan' when another process changed the protocol since the plan was made.
 */
function settleFile(path: string, dataDir: string, plan: OpenPlan, attempt: number, options: OpenDatabaseOptions, busyTimeoutMs: number): SettledFile | 'replan' {
  let state = readFileState(path);
  // Decided under the lock only: outside it an empty file may be another process's new database.
  if (options.replaceLost === true && lostDatabaseMessage(path, dataDir, state) !== undefined) {
    clearLostDatabase(path);
    state = readFileState(path);
  } else {
    refuseLostDatabase(path, dataDir, state);
  }
  if (state.kind === 'foreign') throw new DbError('foreign_file', `refusing to open ${state.reason}`);
  if (state.kind !== 'agentbus' || state.protocol === plan.driver.capabilities.lockProtocol) return { state };
  if (plan.convertFrom === undefined || state.protocol !== plan.convertFrom.protocol) {
    if (attempt < 3) return 'replan';
    throw new DbError('protocol_mismatch', protocolChangedMessage(path, state.protocol, DRIVER_FOR_PROTOCOL[state.protocol]));
  }
  convertForThisProcess(path, plan, busyTimeoutMs);
  return { state: readFileState(path), converted: { from: state.protocol, to: plan.driver.capabilities.lockProtocol } };
}

/** On the open connection: a new file's first pragmas, the lost-schema refusal, the pragmas and the migrations (with a backup first when upgrading). */
function migrateOpened(db: Database<SqliteCapabilities>, created: boolean, dataDir: string, migrations: ReturnType<typeof loadMigrations>, options: OpenDatabaseOptions, now: () => number): MigrationReport {
  if (created) {
    initialiseNewFile(db, db.capabilities.lockProtocol);
    // Messages are private to this user; SQLite gives -wal and -shm the main file's mode.
    chmodSync(db.path, 0o600);
  }
  const applied = appliedMigrations(db);
  // No migration recorded: a new file, or one that lost its schema where a bus was (refused unless reset says so).
  const lostSchema = created || applied.length > 0 || options.replaceLost === true ? undefined : lostSchemaMessage(db, dataDir);
  if (lostSchema !== undefined) throw new DbError('corrupt', lostSchema);
  const pending = pendingMigrations(applied, migrations);
  configureConnection(db);
  const fromVersion = applied.at(-1)?.version ?? 0;
  const backupPath = pending.length > 0 && applied.length > 0 ? backupBeforeUpgrade(db, dataDir, fromVersion, now()) : undefined;
  const done: number[] = [];
  for (const migration of pending) {
    if (applyMigration(db, migration, now())) done.push(migration.version);
  }
  return { applied: done, version: Math.max(fromVersion, ...pending.map((m) => m.version)), backupPath };
}

async function openPrepared(options: OpenDatabaseOptions, dataDir: string): Promise<OpenedDatabase> {
  const now = options.now ?? Date.now;
  const path = databasePath(dataDir);
  const migrations = loadMigrations(options.migrationsDir ?? defaultMigrationsDir());
  const source = options.driverSource ?? { kind: 'env' };
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;

  checkFileAccess(path);

  // The plan is made from the header as it looked before the lock; if another
  // process changed the protocol meanwhile (it converted the file), plan again.
  for (let attempt = 1; ; attempt++) {
    const plan = await planOpen(path, readFileState(path), options.driver, source, options.convertWhenOnlyPortable === true);
    const opened = withSetupLock(path, options.setupTimeoutMs ?? 60_000, (): OpenedDatabase | 'replan' => {
      const settled = settleFile(path, dataDir, plan, attempt, options, busyTimeoutMs);
      if (settled === 'replan') return 'replan';
      const { state, converted } = settled;
      const created = state.kind === 'missing' || state.kind === 'empty';
      const db = openRegisteredUnderLock(path, plan.driver, busyTimeoutMs);
      try {
        const report = migrateOpened(db, created, dataDir, migrations, options, now);
        return { db, created, migrations: report, ...(converted === undefined ? {} : { converted }) };
      } catch (error) {
        try {
          db.close();
        } catch {
          // The failure that got here is the one to report (closing on a full disk can fail too).
        }
        throw error;
      }
    });
    if (opened !== 'replan') return opened;
  }
}
