/**
 * The file semantics of the wasm file layer over synchronous node:fs, in
 * JavaScript values (vfs-facade.ts converts SQLite's pointers once): how a
 * name and SQLite's open flags become a file descriptor, reads that fill
 * past the end with zeros, deletes, access checks and full path names.
 * Locking is vfs-locking.ts; the held-back WAL frame header and the failure
 * records are the layer's state (node-fs-vfs.ts).
 */
import {
  accessSync,
  closeSync,
  constants as fsc,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LockRecord } from './lock-table.js';
import { DatabaseLock } from './portable-locks.js';
import { closeConnectionNumber, liveness, openConnectionNumber, selfOwner } from './owner-liveness.js';
import {
  SQLITE_CANTOPEN,
  SQLITE_IOERR_ACCESS,
  SQLITE_IOERR_DELETE,
  SQLITE_IOERR_DELETE_NOENT,
  SQLITE_IOERR_SHORT_READ,
  SQLITE_OK,
  SQLITE_OPEN_CREATE as OPEN_CREATE,
  SQLITE_OPEN_DELETEONCLOSE as OPEN_DELETEONCLOSE,
  SQLITE_OPEN_EXCLUSIVE as OPEN_EXCLUSIVE,
  SQLITE_OPEN_MAIN_DB as OPEN_MAIN_DB,
  SQLITE_OPEN_READONLY as OPEN_READONLY,
  SQLITE_OPEN_READWRITE as OPEN_READWRITE,
} from './sqlite-codes.js';
import type { NodeFsVfs, OpenFile } from './node-fs-vfs.js';

const ACCESS_EXISTS = 0;
const SYNC_DATAONLY = 0x10;

/** A file SQLite opened: its state and the flags to report back (read-only when it fell back). */
export interface Opened {
  /** The state the layer keeps for it. */
  readonly file: OpenFile;
  /** SQLITE_OPEN_* flags actually in effect. */
  readonly outFlags: number;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The database a file of SQLite's belongs to, by its name. */
function databaseOf(path: string, flags: number, anonymous: boolean): string | undefined {
  if (anonymous) return undefined;
  if (flags & OPEN_MAIN_DB) return path;
  for (const suffix of ['-wal', '-journal']) if (path.endsWith(suffix)) return path.slice(0, -suffix.length);
  return undefined;
}

/** The O_* flags for SQLite's open flags. */
function osFlags(flags: number, anonymous: boolean): number {
  let oflags = (flags & OPEN_READWRITE) !== 0 ? fsc.O_RDWR : fsc.O_RDONLY;
  if (flags & OPEN_CREATE) oflags |= fsc.O_CREAT;
  if (flags & OPEN_EXCLUSIVE || anonymous) oflags |= fsc.O_EXCL;
  return oflags;
}

/**
 * Opens `path` as SQLite asked; a read-write open of an existing file that
 * may only be read falls back to read-only, as unix does. Returns the fd and
 * the flags in effect, or the code to answer with (the failure recorded).
 */
function openDescriptor(layer: NodeFsVfs, path: string, flags: number, anonymous: boolean): { fd: number; outFlags: number } | number {
  try {
    return { fd: openSync(path, osFlags(flags, anonymous), 0o600), outFlags: flags };
  } catch (error) {
    const code = errnoCode(error);
    const mayFallBack = (flags & OPEN_READWRITE) !== 0 && !(flags & OPEN_CREATE);
    if (!mayFallBack || (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM')) return layer.failed('xOpen', error, SQLITE_CANTOPEN, path);
    try {
      return { fd: openSync(path, fsc.O_RDONLY), outFlags: (flags & ~OPEN_READWRITE) | OPEN_READONLY };
    } catch (fallback) {
      return layer.failed('xOpen', fallback, SQLITE_CANTOPEN, path);
    }
  }
}

/** A main database's state: its connection number, its record in the lock table and its lock; or the failure code. */
function mainDatabase(layer: NodeFsVfs, fd: number, path: string, flags: number): OpenFile | number {
  const connection = openConnectionNumber();
  let record: LockRecord;
  try {
    record = LockRecord.claim(path, selfOwner(connection));
  } catch (error) {
    layer.failed('claim lock record', error, SQLITE_CANTOPEN, path);
    closeConnectionNumber(connection);
    closeSync(fd);
    return SQLITE_CANTOPEN;
  }
  const lock = new DatabaseLock(record);
  return { fd, path, flags, deleteOnClose: false, connection, record, lock, dbPath: path, generation: liveness.nextGeneration() };
}

/**
 * xOpen's work: `name` undefined is an anonymous temporary file (created
 * under the OS temp folder and unlinked at once). Returns the open file, or
 * the code to answer with.
 */
export function openFile(layer: NodeFsVfs, name: string | undefined, flags: number): Opened | number {
  const anonymous = name === undefined;
  const path = name ?? join(tmpdir(), `agentbus-sqlite-${randomBytes(8).toString('hex')}`);
  const opened = openDescriptor(layer, path, flags, anonymous);
  if (typeof opened === 'number') return opened;
  const { fd, outFlags } = opened;
  if (anonymous) {
    try {
      unlinkSync(path);
    } catch {
      // Left for the OS temp cleaner.
    }
  }
  if (flags & OPEN_MAIN_DB) {
    const file = mainDatabase(layer, fd, path, flags);
    return typeof file === 'number' ? file : { file, outFlags };
  }
  const deleteOnClose = !anonymous && (flags & OPEN_DELETEONCLOSE) !== 0;
  const dbPath = databaseOf(path, flags, anonymous);
  return { file: { fd, path, flags, deleteOnClose, dbPath, generation: liveness.nextGeneration() }, outFlags };
}

/** xRead's work: `n` bytes at `pos` into `heap8` at `dest`; past the end of the file, zeros and SQLITE_IOERR_SHORT_READ. */
export function readAt(f: OpenFile, heap8: Uint8Array, dest: number, n: number, pos: number): number {
  let done = 0;
  while (done < n) {
    const got = readSync(f.fd, heap8, dest + done, n - done, pos + done);
    if (got === 0) break;
    done += got;
  }
  if (done === n) return SQLITE_OK;
  heap8.fill(0, dest + done, dest + n);
  return SQLITE_IOERR_SHORT_READ;
}

/** xTruncate's work. */
export function truncate(f: OpenFile, size: number): void {
  ftruncateSync(f.fd, size);
}

/** xSync's work: fdatasync for SQLITE_SYNC_DATAONLY, else fsync. */
export function sync(f: OpenFile, flags: number): void {
  if (flags & SYNC_DATAONLY) fdatasyncSync(f.fd);
  else fsyncSync(f.fd);
}

/** xFileSize's work. */
export function fileSize(f: OpenFile): number {
  return fstatSync(f.fd).size;
}

/** xDelete's work: SQLITE_IOERR_DELETE_NOENT for a file that is not there. */
export function deleteFile(layer: NodeFsVfs, path: string): number {
  try {
    unlinkSync(path);
    return SQLITE_OK;
  } catch (error) {
    return errnoCode(error) === 'ENOENT' ? SQLITE_IOERR_DELETE_NOENT : layer.failed('xDelete', error, SQLITE_IOERR_DELETE, path);
  }
}

/**
 * xAccess's work: whether `path` exists (SQLITE_ACCESS_EXISTS) or may be
 * read and written; a number is the code to answer with (the failure recorded).
 */
export function access(layer: NodeFsVfs, path: string, flags: number): boolean | number {
  try {
    if (flags !== ACCESS_EXISTS) {
      accessSync(path, fsc.R_OK | fsc.W_OK);
      return true;
    }
    // As unix does: an empty regular file (e.g. a zero-length -wal) does not count.
    const st = statSync(path, { throwIfNoEntry: false });
    return st !== undefined && (!st.isFile() || st.size > 0);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'EACCES') return false;
    return layer.failed('xAccess', error, SQLITE_IOERR_ACCESS, path);
  }
}

/** xFullPathname's work. */
export function fullPathname(name: string): string {
  return resolve(name);
}
