/**
 * Storage failures a person must fix, as DbErrors that say which file and
 * what to do: a full disk (`full`), another user's or a mode-locked file
 * (`permission`), a read-only file system (`readonly`). Node's file-system
 * errors (errno codes) are converted; a SQLite I/O error on a full disk is
 * re-labelled `full`, since SQLite reports some of those (growing `-shm`, a
 * failed sync) as plain I/O errors.
 */
import { statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { DbError } from '../contract/db-error.js';
import { diskIsFull } from './disk-space.js';
import { currentUid, describeUser, userName } from './file-owner.js';

const SQLITE_IOERR = 10;
const SQLITE_CANTOPEN = 14;

function errnoOf(error: unknown): NodeJS.ErrnoException | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  return e instanceof Error && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) ? e : undefined;
}

function modeText(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** The file at `path`, or the directory it would be created in when it does not exist. */
function existing(path: string): { path: string; stats: Stats } | undefined {
  for (const candidate of [path, dirname(path)]) {
    try {
      return { path: candidate, stats: statSync(candidate) };
    } catch {
      // Try the parent.
    }
  }
  return undefined;
}

/** What to tell a person when `path` cannot be used by this user: whose it is and what can work. */
export function permissionAdvice(path: string, errno = 'EACCES'): string {
  const found = existing(path);
  if (found === undefined) return `permission denied (${errno}) on ${path}`;
  const { stats } = found;
  const what = stats.isDirectory() ? 'directory' : 'file';
  const me = currentUid();
  if (me !== undefined && stats.uid !== me) {
    const owner = userName(stats.uid) ?? `uid ${stats.uid}`;
    return (
      `the ${what} ${found.path} belongs to ${describeUser(stats.uid)}, and agentbus runs as ${describeUser(me)}: ` +
      `run agentbus as ${owner} (the user whose agents use this bus), or set AGENTBUS_DATA_DIR to a directory of your own`
    );
  }
  const needs = stats.isDirectory() ? 'u+rwx' : 'u+rw';
  const wanted = stats.isDirectory() ? 0o700 : 0o600;
  if ((stats.mode & wanted) !== wanted) {
    return `the ${what} ${found.path} is yours but mode ${modeText(stats.mode)}, which does not let you ${stats.isDirectory() ? 'create files in it' : 'read and write it'}: chmod ${needs} ${found.path}`;
  }
  return `the operating system refused access to ${found.path} (${errno}) although it is yours and its mode allows it: look for an immutable flag (lsattr), an ACL (getfacl) or a security policy`;
}

function fsErrorToDbError(e: NodeJS.ErrnoException, dataDir: string): DbError | undefined {
  const path = e.path ?? dataDir;
  const doing = ` (${e.code}${e.syscall === undefined ? '' : ` on ${e.syscall}`}${e.path === undefined ? '' : ` ${e.path}`})`;
  switch (e.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new DbError(
        'full',
        `${e.code === 'EDQUOT' ? 'your disk quota' : 'the disk'} holding ${dataDir} is full${doing}: free space there (\`df -h ${dataDir}\` shows how much is left), then start agentbus again`,
        { error: e },
      );
    case 'EACCES':
    case 'EPERM':
      return new DbError('permission', permissionAdvice(path, e.code), { error: e });
    case 'EROFS':
      return new DbError(
        'readonly',
        `the file system holding ${dataDir} is read-only${doing}: remount it read-write, or set AGENTBUS_DATA_DIR to a directory on a writable disk`,
        { error: e },
      );
    default:
      return undefined;
  }
}

/**
 * Converts what opening or using the database threw into the DbError a
 * person can act on; returns anything else unchanged (to be rethrown).
 */
export function storageError(error: unknown, dataDir: string): unknown {
  if (error instanceof DbError) {
    const primary = (error.sqliteCode ?? 0) & 0xff;
    const ioError = primary === SQLITE_IOERR || primary === SQLITE_CANTOPEN || error.code === 'error';
    if (ioError && diskIsFull(dataDir)) {
      return new DbError('full', `the disk holding ${dataDir} is full (SQLite: ${error.message}): free space there (\`df -h ${dataDir}\` shows how much is left)`, {
        sqliteCode: error.sqliteCode,
        error,
      });
    }
    return error;
  }
  const errno = errnoOf(error);
  return (errno && fsErrorToDbError(errno, dataDir)) ?? error;
}
