/**
 * What opening the database says when it refuses: one place for each
 * message, and for the advice several of them give (reinstalling, converting
 * the file), which `agentbus doctor` and the driver selection repeat.
 */
import type { DriverName, LockProtocol } from '../contract/driver.js';
import { otherProtocol } from '../lock-records/lock-protocol.js';

/** The fix when a driver that should be installed is missing. */
export const REINSTALL = 'reinstall agentbus with `npm ci`';

/** What each protocol needs to be opened. */
export const PROTOCOL_DRIVER_TEXT: Readonly<Record<LockProtocol, string>> = {
  posix: 'the native driver, node:sqlite, Node >= 22.13',
  portable: 'the wasm driver, any Node >= 20',
};

/** How a posix file becomes usable where node:sqlite is missing: the automatic conversion, or the command. */
export const CONVERT_TO_PORTABLE =
  'let `agentbus mcp` on this Node convert the file to the portable protocol (it does so by itself when no process has the file open), or run `agentbus convert --to portable` with every agentbus process stopped';

/** The command that converts a `protocol` file, as a person runs it. */
export function convertCommand(protocol: LockProtocol): string {
  return `agentbus convert --to ${otherProtocol(protocol)}`;
}

/** A file of one protocol with the other's driver asked for; `autoFix` is how to set the driver back to auto, given when auto would open it. */
export function protocolMismatchMessage(path: string, protocol: LockProtocol, asked: string, choice: DriverName, wanted: DriverName, autoFix: string | undefined): string {
  const convertHint = `convert the file with \`${convertCommand(protocol)}\` while no agentbus process has it open`;
  return (
    `${path} uses the ${protocol} lock protocol (${PROTOCOL_DRIVER_TEXT[protocol]}), but ${asked} asks for the ${choice} driver, and the two protocols must never share a file: ` +
    (autoFix !== undefined ? `${autoFix} (auto opens it with the ${wanted} driver), or ${convertHint}` : convertHint)
  );
}

/** The file's protocol needs a driver that cannot run here. */
export function driverMissingMessage(path: string, protocol: LockProtocol, wanted: DriverName, reason: string): string {
  const fix = protocol === 'posix' ? `run it with Node >= 22.13, or ${CONVERT_TO_PORTABLE}` : REINSTALL;
  return `${path} uses the ${protocol} lock protocol, which needs the ${wanted} driver, but ${reason}; ${fix}`;
}

/** The automatic conversion refused: `holders` (described) have the file open. */
export function convertWhileHeldMessage(path: string, why: string, holders: string, many: boolean, otherwise: string): string {
  return `${path} uses the posix lock protocol (${PROTOCOL_DRIVER_TEXT.posix}) and this process can use only the portable one (${why}). agentbus converts such a file itself, but only while no process has it open, and ${holders} ${many ? 'have' : 'has'} it open: stop ${many ? 'them (close those harness sessions)' : 'it (close that harness session)'} and start this one again, or ${otherwise}; nothing changed`;
}

/** The automatic conversion refused: nothing here can list who has the file open. */
export function convertUnseenMessage(path: string, why: string, otherwise: string): string {
  return `${path} uses the posix lock protocol (${PROTOCOL_DRIVER_TEXT.posix}) and this process can use only the portable one (${why}); agentbus converts such a file itself only when it can list the processes that have it open, and this system has neither /proc nor lsof: stop every agentbus process and run \`agentbus convert --to portable\`, or ${otherwise}; nothing changed`;
}

/** Another process converted the file while this one waited for the set-up lock, more than once. */
export function protocolChangedMessage(path: string, protocol: LockProtocol, driver: DriverName): string {
  return `${path} changed to the ${protocol} lock protocol while this process waited; restart it (auto then picks ${driver})`;
}

/** PRAGMA journal_mode=WAL did not take. */
export function journalModeMessage(path: string, mode: unknown): string {
  return `${path}: PRAGMA journal_mode=WAL answered ${String(mode)}; another process may hold the file in another journal mode, or the file system may not support it`;
}

/** A driver that cannot share the WAL index across processes (capabilities.wal false). */
export function noWalMessage(path: string, driver: string): string {
  return `${path}: the ${driver} driver cannot share a WAL index across processes, and every agentbus process opens the database in WAL mode; use another driver`;
}

/** `agentbus reset` of a lost database that processes still hold. */
export function lostInUseMessage(path: string, holders: string, many: boolean): string {
  return `${path} lost its content, and ${holders} still ${many ? 'have' : 'has'} it open: stop ${many ? 'them' : 'it'} (close those harness sessions), then run \`agentbus reset\` again; nothing changed`;
}

/** The data directory is a symbolic link to nothing. */
export function danglingDataDirMessage(dir: string, target: string): string {
  return `the data directory ${dir} is a symbolic link to ${target}, which does not exist: create it (\`mkdir -p ${target}\`), or remove the link, or set AGENTBUS_DATA_DIR to a directory`;
}

/** SQLite found the file damaged at open; `restore` is what to do about it. */
export function damagedMessage(path: string, sqliteMessage: string, restore: string): string {
  return `${path} is damaged (SQLite: ${sqliteMessage}): run \`agentbus doctor\`, then ${restore}`;
}

/** Another process held the write lock past the busy timeout during the open. */
export function busyAtOpenMessage(path: string, sqliteMessage: string): string {
  return `${path} is busy: another process held its write lock for longer than the busy timeout while this one opened or upgraded it (SQLite: ${sqliteMessage}); try again once that process's long write is done`;
}

/** SQLite could not open the file, for a reason doctor can tell. */
export function cannotOpenMessage(path: string, sqliteMessage: string): string {
  return `cannot open ${path} (SQLite: ${sqliteMessage}): run \`agentbus doctor\` to see why`;
}

/** Why the data directory could not be made, when it is not a permission: its parent. */
export function dataDirParentAdvice(code: string | undefined): string {
  return `${code}: its parent must be a directory this user can write, or set AGENTBUS_DATA_DIR to a directory you own`;
}

/** The data directory could not be made; `why` says what to do. */
export function cannotCreateDataDirMessage(dir: string, why: string): string {
  return `cannot create the data directory ${dir}: ${why}`;
}

/** The data directory path is a file. */
export function dataDirNotDirectoryMessage(dir: string): string {
  return `the data directory ${dir} is not a directory; set AGENTBUS_DATA_DIR to a directory`;
}

/** This user cannot read, write or search the data directory; `advice` is permissionAdvice's. */
export function dataDirUnusableMessage(advice: string): string {
  return `agentbus cannot use its data directory: ${advice}`;
}

/** This user cannot read and write a database file; `advice` is permissionAdvice's. */
export function databaseUnusableMessage(advice: string): string {
  return `agentbus cannot read and write its database: ${advice}`;
}

/** The setting names a driver (`asked` is describeDriverSetting's). */
export function settingAsksFor(asked: string, driver: DriverName): string {
  return `${asked} asks for the ${driver} driver`;
}

/** A posix file where node:sqlite cannot run (`reason`), before converting it. */
export function nativeNeededMessage(path: string, reason: string): string {
  return `${path} uses the posix lock protocol, which needs the native driver (${reason})`;
}

/** What else would open a posix file as it is, instead of converting it. */
export const RUN_ON_NODE_22 = 'run this one with Node >= 22.13';

/** A driver a step needs cannot run: `why` it was needed, `reason` it cannot run, `whatToDo`. */
export function driverCannotRunMessage(why: string, reason: string, whatToDo: string): string {
  return `${why}, but ${reason}; ${whatToDo}`;
}

/** No driver runs here; the reasons of both, in the order tried. */
export function noDriverMessage(firstReason: string | undefined, lastReason: string): string {
  return driverCannotRunMessage(`no driver can run here (${firstReason})`, lastReason, REINSTALL);
}
