/**
 * Who has a database open, by every means this process has, for the
 * operations that must run with nobody else on the file (converting its lock
 * protocol, restoring a backup):
 * - the opener registry: every agentbus connection of this version, any driver,
 *   any platform, any pid namespace (opener-registry.ts);
 * - open file handles: any process of this user, agentbus or not, through
 *   /proc (Linux) or lsof (elsewhere) (open-files.ts);
 * - the portable lock table: wasm connections not certainly gone, of any realm
 *   (portable-lock-files.ts, judged by lock-owner-verdict.ts).
 * Holders are merged per process, so each is named once.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { liveOpeners } from './opener-registry.js';
import { processesHolding, type OpenFilesMethod } from '../processes/open-files.js';
import { judgeLockOwner } from './lock-owner-verdict.js';
import { LeaseWatch } from './owner-lease.js';
import { isRevoked, lockTablePath, ownerProcess, readRecordHead, RECORD_SIZE } from './portable-lock-files.js';
import { currentProcess, describeProcess, sameRealm, type ProcessIdentity } from '../processes/process-identity.js';

export interface FileHolder {
  /** The process, as far as known (realm undefined when only its pid is known). */
  readonly owner: ProcessIdentity;
  /** Its command line, or '' when unknown. */
  readonly command: string;
  /** How it was found: `registered` (an agentbus connection), `open file`, `lock table`. */
  readonly seenAs: readonly string[];
}

export interface HolderSurvey {
  /** Every process that has the file open, this process's own connections included. */
  readonly holders: readonly FileHolder[];
  /** False when neither /proc nor lsof could list open files here (only agentbus connections are seen). */
  readonly openFilesChecked: boolean;
}

/** The database and every file beside it that an open connection keeps open. */
export function databaseFiles(dbPath: string): string[] {
  return [dbPath, `${dbPath}-wal`, `${dbPath}-shm`, `${dbPath}-journal`, lockTablePath(dbPath)];
}

function lockTableOwners(dbPath: string): ProcessIdentity[] {
  let buf: Buffer;
  try {
    buf = readFileSync(lockTablePath(dbPath));
  } catch {
    return [];
  }
  const owners: ProcessIdentity[] = [];
  const watch = new LeaseWatch();
  for (let base = 0; base + RECORD_SIZE <= buf.length; base += RECORD_SIZE) {
    const head = readRecordHead(buf, base);
    if (head.owner.pid === 0) continue;
    // Judged as the driver judges it (lock-owner-verdict.ts): only a certainly gone owner is left
    // out; one of another realm holds while its lease runs, and an expired or unjudgeable one is
    // not certainly gone either.
    const verdict = judgeLockOwner(head.owner, head.leased ? head.lease : undefined, isRevoked(head), watch);
    if (verdict.state !== 'dead') owners.push(ownerProcess(head.owner));
  }
  return owners;
}

/** Surveys who holds `dbPath` (resolved through symlinks). Never writes, except pruning dead registry entries. */
export function surveyHolders(dbPath: string, method: OpenFilesMethod = 'auto'): HolderSurvey {
  let path = dbPath;
  try {
    path = realpathSync(dbPath);
  } catch {
    // missing: nobody holds it by that name
  }
  const byKey = new Map<string, { owner: ProcessIdentity; command: string; seenAs: string[] }>();
  const add = (owner: ProcessIdentity, command: string, how: string): void => {
    // A pid from open files or the lock table lives in this realm; one from the registry may not.
    const local = owner.realm === undefined || sameRealm(owner.realm, currentProcess().realm);
    const key = local ? `pid:${owner.pid}` : `${owner.pid}@${owner.realm?.boot}.${owner.realm?.pidNamespace}`;
    const entry = byKey.get(key);
    if (entry === undefined) {
      byKey.set(key, { owner, command, seenAs: [how] });
      return;
    }
    if (entry.command === '' || command.length > entry.command.length) entry.command = command;
    if (!entry.seenAs.includes(how)) entry.seenAs.push(how);
  };
  for (const opener of liveOpeners(path)) add(opener.owner, opener.command, 'registered');
  const handles = processesHolding(databaseFiles(path), method);
  for (const handle of handles ?? []) add({ pid: handle.pid, startTime: 0, realm: undefined }, handle.command, 'open file');
  for (const owner of lockTableOwners(path)) add(owner, '', 'lock table');
  return { holders: [...byKey.values()], openFilesChecked: handles !== undefined };
}

/** `pid 123 (node /x/bin/agentbus.js mcp)`, `pid 7 in another pid namespace or machine (...)`, or `this process`. */
export function describeHolder(holder: FileHolder): string {
  const me = currentProcess();
  if (holder.owner.pid === me.pid && (holder.owner.realm === undefined || sameRealm(holder.owner.realm, me.realm))) {
    return 'this process (another of its connections)';
  }
  const who = holder.owner.realm === undefined ? `pid ${holder.owner.pid}` : describeProcess(holder.owner);
  return holder.command === '' ? who : `${who} (${holder.command})`;
}

/** The holders as one phrase for a message: `pid 1 (...), pid 2 (...)`. */
export function describeHolders(holders: readonly FileHolder[]): string {
  return holders.map(describeHolder).join(', ');
}
