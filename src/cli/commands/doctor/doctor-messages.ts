/**
 * The longer findings of `agentbus doctor`'s database checks, in one place;
 * the advice they share with opening the database (reinstall, convert) comes
 * from src/db/open/open-messages.ts.
 */
import type { DriverName, LockProtocol } from '../../../db/contract/driver.js';
import { CONVERT_TO_PORTABLE, convertCommand, REINSTALL } from '../../../db/open/open-messages.js';
import { formatBytes } from '../../format.js';

/** lock_protocol: the driver the file's protocol needs cannot run here. */
export function driverMissingFinding(protocol: LockProtocol, wanted: DriverName, reason: string): string {
  return `${protocol}, which needs the ${wanted} driver, and it cannot run here (${reason}); ${protocol === 'posix' ? CONVERT_TO_PORTABLE : REINSTALL}`;
}

/** lock_protocol: the driver setting asks for the other protocol's driver; `autoFix` sets it back to auto. */
export function settingMismatchFinding(protocol: LockProtocol, wanted: DriverName, choice: string, autoFix: string): string {
  return `${protocol} (${wanted} driver) but the driver setting is ${choice}: ${autoFix}, or run \`${convertCommand(protocol)}\` with every agentbus process stopped`;
}

/** integrity: skipped while the -wal has a finding. */
export const INTEGRITY_AFTER_WAL =
  'not checked: opening the database now could make SQLite checkpoint and delete the damaged -wal; deal with the wal finding first';

/** integrity: what was checked, when it passed. */
export function integrityOkFinding(full: boolean, sizeBytes: number): string {
  return full
    ? 'PRAGMA integrity_check: ok'
    : `PRAGMA quick_check of the bus tables: ok (messages, their index and vectors not read: \`agentbus doctor --full\` checks every page of ${formatBytes(sizeBytes)})`;
}

/** integrity: what SQLite found, and what to do. */
export function integrityProblemsFinding(problems: readonly string[]): string {
  return `${problems.length} problem(s): ${problems.slice(0, 5).join('; ')}; stop agentbus, then \`agentbus restore <backup>\` (\`agentbus backup\` makes them) or \`agentbus reset\``;
}
