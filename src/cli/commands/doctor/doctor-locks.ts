/**
 * doctor's `stale_locks` check: every lock beside the database and its
 * owner, judged as the drivers judge it. Stale (problem, cleared by `--fix`):
 * a certainly dead owner, or another realm's owner whose lease expired.
 * Never stale: a live owner, including one in another pid namespace or on
 * another machine that renews its lease (reported, nothing to do), and one
 * that cannot be judged at all (an older agentbus not visible here: a
 * problem `--fix` does not touch, with what to do instead).
 */
import type { CliIo } from '../../cli-io.js';
import { confirm } from '../../confirm.js';
import type { Check } from './doctor-check.js';
import { clearStaleLocks, surveyLocks, type LockEntry } from './lock-files.js';

function describeLock(entry: LockEntry): string {
  return `${entry.kind.replace('_', ' ')} of ${entry.owner} (${entry.path})`;
}

function isStale(entry: LockEntry): boolean {
  return entry.state === 'dead' || entry.state === 'expired';
}

const EXPIRED_NOTE =
  'an expired lease means its process crashed or is stopped (SIGSTOP, a paused container); clearing revokes it, and a stopped process then fails its next database call and must be restarted';

/** The stale_locks check for the database at `path`; `protocol` is the file's lock protocol when it is an agentbus database. */
export async function checkLocks(io: CliIo, fix: boolean, path: string, protocol: string | undefined): Promise<Check> {
  const entries = surveyLocks(path).entries;
  // Expired leases are left to the stale listing below: --fix revokes them on either file.
  const records = entries.filter((e) => (e.state === 'alive' || e.state === 'unknown') && e.kind === 'lock_record');
  if (protocol === 'posix' && records.length > 0) {
    return {
      name: 'stale_locks',
      status: 'problem',
      message: `a portable-protocol (wasm) process, ${records[0]?.owner}, has this posix database open: the protocols must never share a file; stop it and set driver to auto or native`,
    };
  }
  const unknown = entries.filter((e) => e.state === 'unknown');
  if (unknown.length > 0) {
    return {
      name: 'stale_locks',
      status: 'problem',
      message: `${unknown.length} lock(s) that cannot be judged: ${unknown.map(describeLock).join('; ')}; such a process either crashed or runs in a container or sandbox where it cannot see this version's locks. Stop every older agentbus process (upgrade them); then, with no agentbus process running anywhere on this directory, delete those files. \`--fix\` never removes them`,
    };
  }
  const foreign = entries.filter((e) => e.state === 'alive' && e.foreign);
  const inUse = entries.some((e) => e.state === 'alive' && e.kind === 'lock_record');
  const foreignNote =
    (foreign.length === 0
      ? ''
      : `; ${foreign.length} live lock(s) of processes in another pid namespace or machine, judged by their leases, nothing to do: ${foreign.map(describeLock).join('; ')}`) +
    (inUse ? `; agentbus processes have the database open: leave ${path}-locks, ${path}-locks.d, -shm and -wal alone until they exit (deleting them while they run loses updates)` : '');
  const stale = entries.filter(isStale);
  if (stale.length === 0) return { name: 'stale_locks', status: 'ok', message: `none${foreignNote}` };
  const listing = stale.map(describeLock).join('; ');
  const note = stale.some((e) => e.state === 'expired') ? `; ${EXPIRED_NOTE}` : '';
  let clear = fix;
  if (!clear && io.stdinIsTty) {
    io.stderr.write(`found ${stale.length} stale lock(s): ${listing}${note}\n`);
    clear = await confirm(io, 'Clear the stale locks (their owners are dead, or their leases expired)?');
  }
  if (!clear) {
    return { name: 'stale_locks', status: 'problem', message: `${stale.length} stale lock(s): ${listing}${note}; run \`agentbus doctor --fix\` to clear them${foreignNote}` };
  }
  const report = clearStaleLocks(path);
  if (report.kept.length > 0) {
    return {
      name: 'stale_locks',
      status: 'warn',
      message: `cleared ${report.cleared.length}; kept ${report.kept.length} dead record(s) in the lock table: ${report.kept[0]?.reason}${foreignNote}`,
    };
  }
  return {
    name: 'stale_locks',
    status: 'fixed',
    message: `cleared ${report.cleared.length} stale lock(s): ${report.cleared.map(describeLock).join('; ')}${foreignNote}`,
  };
}
