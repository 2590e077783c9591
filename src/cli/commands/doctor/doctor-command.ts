/**
 * `agentbus doctor`: checks what can go wrong outside the bus's own logic —
 * the config, the data directory's permissions and file system, free disk
 * space, the file's lock protocol, its -wal and integrity, stale locks, the
 * files shared while agents run — and says how to fix each; on a bus whose
 * database_url names a PostgreSQL server, the server's checks instead of the
 * file's (doctor-on-server.ts). Exits
 * 1 when any check finds a problem. Stale locks are cleared only with `--fix`
 * or a "yes" on a terminal, and only those whose owner is certainly dead or
 * whose lease expired (docs/drivers.md).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, type Config } from '../../../config.js';
import { DbError } from '../../../db/contract/db-error.js';
import type { Driver, LockProtocol } from '../../../db/contract/driver.js';
import { databasePath, lostDatabaseMessage, openForInspection } from '../../../db/open/open-database.js';
import { readFileState, type FileState } from '../../../db/storage/file-header.js';
import { lostSchemaMessage } from '../../../db/storage/lost-database.js';
import { permissionAdvice } from '../../../db/storage/storage-error.js';
import { changeDriverSetting, DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';
import { commandConfig } from '../../cli-config.js';
import type { CliIo } from '../../cli-io.js';
import type { Check, CheckStatus } from './doctor-check.js';
import { driverMissingFinding, INTEGRITY_AFTER_WAL, integrityOkFinding, integrityProblemsFinding, settingMismatchFinding } from './doctor-messages.js';
import { formatBytes, table } from '../../format.js';
import { integrityProblems, quickIntegrityProblems } from '../../../db/storage/integrity.js';
import { settingConflicts } from '../../../db/open/open-plan.js';
import { checkFileSystem } from './doctor-file-system.js';
import { checkLocks } from './doctor-locks.js';
import { progressFor } from '../../progress.js';
import { newDatabaseCheck } from '../../new-database-driver.js';
import { checkDisk } from './doctor-disk.js';
import { checkSharedFiles, NOT_SEARCHABLE, searchable } from './doctor-shared-files.js';
import { checkSchema } from './doctor-schema.js';
import { checkWal } from './doctor-wal.js';
import type { ServerConfig } from './doctor-database-url.js';
import { FILE_CHECKS, FILE_CHECKS_LEFT_OUT, SERVER_CHECKS, SERVER_CHECKS_WAIT_FOR_CONFIG, serverChecks } from './doctor-on-server.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus doctor` takes (its spec.ts). */
export type DoctorOptions = OptionsOf<typeof spec.options>;

/** `ok`: fine; `warn`: works but should be fixed; `problem`: broken (exit 1); `fixed`: was a problem, cleared by this run. */
export interface DoctorReport {
  /** False when any check is a problem. */
  readonly ok: boolean;
  /** Every check, in a fixed order. */
  readonly checks: readonly Check[];
  /** Checks that have no meaning for this bus and did not run (the file's, on a server), and why; absent when every check applies. */
  readonly leftOut?: { readonly checks: readonly string[]; readonly reason: string };
}

const DEFAULT_DATA_DIR = '~/.local/share/agentbus';

/** Where the data directory is when the config cannot be read: AGENTBUS_DATA_DIR or the default. */
function fallbackDataDir(io: CliIo): string {
  const raw = io.env.AGENTBUS_DATA_DIR || DEFAULT_DATA_DIR;
  const expanded = raw === '~' ? io.homeDir : raw.startsWith('~/') ? join(io.homeDir, raw.slice(2)) : raw;
  return isAbsolute(expanded) ? expanded : resolve(io.cwd, expanded);
}

function checkConfig(io: CliIo, options: DoctorOptions): { check: Check; config: Config | undefined } {
  try {
    const config = commandConfig(io, options);
    const where = config.configFileFound ? config.configPath : `${config.configPath} (no file: defaults)`;
    return { check: { name: 'config', status: 'ok', message: `${where} is valid` }, config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { check: { name: 'config', status: 'problem', message: `${error.message}` }, config: undefined };
  }
}

function modeText(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

function checkDataDir(dir: string): Check {
  let st;
  try {
    st = statSync(dir);
  } catch {
    return { name: 'data_directory', status: 'ok', message: `${dir} does not exist yet; the first \`agentbus mcp\` creates it (0700)` };
  }
  if (!st.isDirectory()) return { name: 'data_directory', status: 'problem', message: `${dir} is not a directory; remove it or set AGENTBUS_DATA_DIR elsewhere` };
  try {
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    return { name: 'data_directory', status: 'problem', message: permissionAdvice(dir, (error as NodeJS.ErrnoException).code) };
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    return { name: 'data_directory', status: 'warn', message: `${dir} belongs to uid ${st.uid}, not to you (uid ${uid}); agentbus serves one user: use a directory you own` };
  }
  if ((st.mode & 0o077) !== 0) {
    return { name: 'data_directory', status: 'warn', message: `${dir} is mode ${modeText(st.mode)}: other users can reach the bus; chmod 700 ${dir}` };
  }
  return { name: 'data_directory', status: 'ok', message: `${dir} (mode ${modeText(st.mode)}, yours)` };
}

interface DatabaseChecks {
  /** The database, lock_protocol and integrity checks, in that order, as far as they got. */
  readonly checks: Check[];
}

/** The database check; the file's protocol and size when the checks go on, undefined when this one ends them. */
async function checkFile(config: Config | undefined, path: string, checks: Check[]): Promise<{ protocol: LockProtocol; size: number } | undefined> {
  let state: FileState;
  try {
    state = readFileState(path);
  } catch (error) {
    const message = searchable(dirname(path)) ? permissionAdvice(path, (error as NodeJS.ErrnoException).code) : NOT_SEARCHABLE;
    checks.push({ name: 'database', status: 'problem', message });
    return undefined;
  }
  const lost = lostDatabaseMessage(path, dirname(path), state);
  if (lost !== undefined) {
    checks.push({ name: 'database', status: 'problem', message: lost });
    return undefined;
  }
  if (state.kind === 'missing' || state.kind === 'empty') {
    checks.push({ name: 'database', status: 'ok', message: `${path} does not exist yet; the first \`agentbus mcp\` creates it` });
    checks.push(await newDatabaseCheck(config));
    return undefined;
  }
  const st = statSync(path);
  if (state.kind === 'foreign') {
    checks.push({ name: 'database', status: 'problem', message: `${state.reason}` });
    return undefined;
  }
  checks.push(
    (st.mode & 0o077) !== 0
      ? { name: 'database', status: 'warn', message: `${path} is mode ${modeText(st.mode)}; chmod 600 ${path}` }
      : { name: 'database', status: 'ok', message: `${path} (${formatBytes(st.size)}, mode ${modeText(st.mode)})` },
  );
  return { protocol: state.protocol, size: st.size };
}

/** The lock_protocol check; the driver that opens the file, undefined when it cannot run here. */
async function checkProtocol(config: Config | undefined, protocol: LockProtocol, checks: Check[]): Promise<Driver | undefined> {
  const wanted = DRIVER_FOR_PROTOCOL[protocol];
  const loaded = await loadDriver(wanted);
  if (!loaded.ok) {
    checks.push({ name: 'lock_protocol', status: 'problem', message: driverMissingFinding(protocol, wanted, loaded.reason) });
    return undefined;
  }
  const choice = config?.driver ?? 'auto';
  if (settingConflicts(protocol, choice)) {
    const autoFix = changeDriverSetting(config?.driverSource ?? { kind: 'env' }, 'auto');
    checks.push({ name: 'lock_protocol', status: 'problem', message: settingMismatchFinding(protocol, wanted, choice, autoFix) });
  } else {
    checks.push({ name: 'lock_protocol', status: 'ok', message: `${protocol} (${wanted} driver, SQLite ${loaded.driver.capabilities.sqliteVersion})` });
  }
  return loaded.driver;
}

/** The integrity check: SQLite's verdict on the file opened for inspection, or why it was not checked. */
async function checkIntegrity(io: CliIo, path: string, driver: Driver, full: boolean, size: number): Promise<Check> {
  const progress = progressFor(io);
  progress.blockingStep(full ? `checking every page of ${formatBytes(size)} ...` : 'checking the integrity of the bus tables ...', full ? size : 0);
  let problems: string[];
  try {
    const db = openForInspection(path, driver);
    if (typeof db === 'string') return { name: 'integrity', status: 'warn', message: `not checked: ${db}` };
    try {
      problems = full ? integrityProblems(db) : quickIntegrityProblems(db);
      // An intact file without its schema where a bus was is the emptied database too (src/db/storage/lost-database.ts).
      const lostSchema = problems.length === 0 ? lostSchemaMessage(db, dirname(path)) : undefined;
      if (lostSchema !== undefined) return { name: 'integrity', status: 'problem', message: lostSchema };
    } finally {
      db.close();
    }
  } catch (error) {
    // Only SQLite's own verdict on the file makes it damaged; a lock it cannot judge or a refusal is reported where it belongs, never with restore or reset advice.
    if (!(error instanceof DbError) || error.code !== 'corrupt') return { name: 'integrity', status: 'warn', message: `not checked: ${(error as Error).message}` };
    problems = [`cannot open it: ${error.message}`];
  } finally {
    progress.done();
  }
  return problems.length === 0
    ? { name: 'integrity', status: 'ok', message: integrityOkFinding(full, size) }
    : { name: 'integrity', status: 'problem', message: integrityProblemsFinding(problems) };
}

/** `full`: PRAGMA integrity_check of every page (--full); else the quick check of the bus tables. */
async function checkDatabase(io: CliIo, config: Config | undefined, path: string, full: boolean): Promise<DatabaseChecks> {
  const checks: Check[] = [];
  const file = await checkFile(config, path, checks);
  if (file === undefined) return { checks };
  const driver = await checkProtocol(config, file.protocol, checks);
  if (driver === undefined) return { checks };
  const wal = checkWal(path);
  checks.push(wal);
  if (wal.status !== 'ok') {
    checks.push({ name: 'integrity', status: 'warn', message: INTEGRITY_AFTER_WAL });
    return { checks };
  }
  checks.push(await checkSchema(path));
  checks.push(await checkIntegrity(io, path, driver, full, file.size));
  return { checks };
}

/** The report of a bus on a server: config, data directory (its log lives there), then the server's checks. */
async function serverReport(io: CliIo, config: ServerConfig, configCheck: Check): Promise<DoctorReport> {
  const checks = [configCheck, checkDataDir(config.data_directory), ...(await serverChecks(io, config))];
  return { ok: checks.every((c) => c.status !== 'problem'), checks, leftOut: { checks: FILE_CHECKS, reason: FILE_CHECKS_LEFT_OUT } };
}

/** Runs every check; never throws for what it checks. */
export async function runDoctor(io: CliIo, options: DoctorOptions): Promise<DoctorReport> {
  const { check: configCheck, config } = checkConfig(io, options);
  if (config?.database_url !== undefined) return serverReport(io, { ...config, database_url: config.database_url }, configCheck);
  const dataDir = config?.data_directory ?? fallbackDataDir(io);
  if (config === undefined && (io.env.AGENTBUS_DATABASE_URL ?? '') !== '') {
    const leftOut = { checks: [...SERVER_CHECKS, ...FILE_CHECKS], reason: SERVER_CHECKS_WAIT_FOR_CONFIG };
    return { ok: false, checks: [configCheck, checkDataDir(dataDir)], leftOut };
  }
  const path = databasePath(dataDir);
  const checks: Check[] = [configCheck, checkDataDir(dataDir), checkFileSystem(dataDir), checkDisk(dataDir, config)];
  const db = await checkDatabase(io, config, path, options.full);
  checks.push(...db.checks);
  let protocol: string | undefined;
  try {
    const state = readFileState(path);
    protocol = state.kind === 'agentbus' ? state.protocol : undefined;
  } catch {
    // Unreadable: the database check said so.
  }
  checks.push(await checkLocks(io, options.fix, path, protocol));
  checks.push(checkSharedFiles(path));
  return { ok: checks.every((c) => c.status !== 'problem'), checks };
}

const LABEL: Readonly<Record<CheckStatus, string>> = { ok: 'ok', warn: 'WARN', problem: 'PROBLEM', fixed: 'fixed' };

export async function doctorCommand(io: CliIo, options: DoctorOptions): Promise<number> {
  const report = await runDoctor(io, options);
  if (options.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const lines = table(report.checks.map((c) => [LABEL[c.status], c.name, c.message]), '');
    if (report.leftOut !== undefined) lines.push(`left out: ${report.leftOut.checks.join(', ')}: ${report.leftOut.reason}`);
    const problems = report.checks.filter((c) => c.status === 'problem').length;
    lines.push(problems === 0 ? 'no problems found' : `${problems} problem(s) found`);
    io.stdout.write(`${lines.join('\n')}\n`);
  }
  return report.ok ? 0 : 1;
}
