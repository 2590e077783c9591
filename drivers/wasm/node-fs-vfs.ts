/**
 * SQLite's file layer (VFS) over synchronous node:fs. Files are real files on
 * disk in SQLite's own formats, so stock SQLite can read them when no agentbus
 * process runs. Locking is the `portable` protocol (portable-locks.ts and
 * the lock table), WAL shared memory is shm-index.ts, and sleeps block with
 * Atomics.wait instead of spinning.
 */
import {
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
  writeSync,
  writevSync,
  accessSync,
} from 'node:fs';
import { randomFillSync, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sleepSync } from '../../src/db/sleep-sync.js';
import { LockRecord } from './lock-table.js';
import { DatabaseLock } from './portable-locks.js';
import { refreshAllIndexes, ShmIndex } from './shm-index.js';
import { closeConnectionNumber, openConnectionNumber, selfOwner } from './owner-liveness.js';
import {
  SQLITE_CANTOPEN,
  SQLITE_FULL,
  SQLITE_IOERR,
  SQLITE_IOERR_ACCESS,
  SQLITE_IOERR_CHECKRESERVEDLOCK,
  SQLITE_IOERR_DELETE,
  SQLITE_IOERR_DELETE_NOENT,
  SQLITE_IOERR_FSTAT,
  SQLITE_IOERR_FSYNC,
  SQLITE_IOERR_LOCK,
  SQLITE_IOERR_READ,
  SQLITE_IOERR_SHMLOCK,
  SQLITE_IOERR_SHMMAP,
  SQLITE_IOERR_SHMOPEN,
  SQLITE_IOERR_SHORT_READ,
  SQLITE_IOERR_TRUNCATE,
  SQLITE_IOERR_UNLOCK,
  SQLITE_IOERR_WRITE,
  SQLITE_NOTFOUND,
  SQLITE_OK,
} from './sqlite-codes.js';
import type { Sqlite3 } from './sqlite-runtime.js';
import { count } from './vfs-stats.js';

/** The name the file layer registers under. */
export const VFS_NAME = 'agentbus-nodefs';


/**
 * Whether the file layer offers SQLite shared memory (xShmMap & co., io
 * methods version 2), i.e. whether WAL mode is possible (the cross-process WAL
 * index of shm-index.ts). The switch to rollback-journal mode, should the WAL
 * index ever need to be taken out again: with it false SQLite answers
 * `PRAGMA journal_mode=WAL` with `delete` and runs on the portable database
 * locks alone (then also set capabilities.wal to false in wasm-driver.ts; an
 * existing WAL-mode file can then only be opened after `PRAGMA
 * locking_mode=EXCLUSIVE; PRAGMA journal_mode=DELETE`). See docs/drivers.md.
 */
const SHARED_MEMORY = true;

const OPEN_READONLY = 0x1;
const OPEN_READWRITE = 0x2;
const OPEN_CREATE = 0x4;
const OPEN_DELETEONCLOSE = 0x8;
const OPEN_EXCLUSIVE = 0x10;
const OPEN_MAIN_DB = 0x100;
const OPEN_WAL = 0x80000;

const ACCESS_EXISTS = 0;
const SYNC_DATAONLY = 0x10;
const IOCAP_POWERSAFE_OVERWRITE = 0x1000;
const SECTOR_SIZE = 4096;

/** The state behind one sqlite3_file. */
interface OpenFile {
  /** The OS file descriptor. */
  readonly fd: number;
  /** Absolute path (already unlinked for anonymous temp files). */
  readonly path: string;
  /** SQLITE_OPEN_* flags it was opened with. */
  readonly flags: number;
  /** Unlink on close (DELETEONCLOSE with a name). */
  readonly deleteOnClose: boolean;
  /** For main databases: the connection number that owns the locks. */
  readonly connection?: number;
  /** For main databases: this connection's record in the lock table. */
  readonly record?: LockRecord;
  /** For main databases: the database lock level. */
  readonly lock?: DatabaseLock;
  /** For main databases in WAL mode: the shared WAL index. */
  shm?: ShmIndex;
}

const files = new Map<number, OpenFile>();

const debug = process.env.AGENTBUS_WASM_DEBUG === '1';

/** A failure inside the file layer: what SQLite was told (`rc`) and why. */
interface FileLayerFailure {
  readonly rc: number;
  readonly error: Error;
}

/**
 * The last failure per file path (the database, its -wal and -journal), so
 * that the error the user sees can say why (SQLite itself only gets a result
 * code), and the newest of all for xGetLastError. Bounded: a file layer that
 * fails for many distinct paths forgets the oldest.
 */
const failures = new Map<string, FileLayerFailure>();
let newestFailure: FileLayerFailure | undefined;
const MAX_FAILURES_KEPT = 64;

function remember(path: string | undefined, error: unknown, rc: number): void {
  const failure = { rc, error: error instanceof Error ? error : new Error(String(error)) };
  newestFailure = failure;
  if (path === undefined) return;
  failures.delete(path);
  failures.set(path, failure);
  if (failures.size > MAX_FAILURES_KEPT) failures.delete(failures.keys().next().value as string);
}

/**
 * Maps a failure inside the file layer to a SQLite code and remembers it for
 * the file (a sqlite3_file pointer or a path); with AGENTBUS_WASM_DEBUG=1 also
 * says what failed on stderr.
 */
function failed(where: string, error: unknown, rc: number, file?: number | string): number {
  if (debug) process.stderr.write(`agentbus wasm vfs: ${where}: ${(error as Error)?.stack ?? String(error)}\n`);
  remember(typeof file === 'number' ? files.get(file)?.path : file, error, rc);
  return rc;
}

/**
 * Takes (and forgets) the last file-layer failure behind a SQLite error of
 * the database at `dbPath` (its own file, -wal or -journal) whose primary
 * result code matches `resultCode`, or undefined when none is known.
 */
export function takeFileLayerFailure(dbPath: string, resultCode: number): Error | undefined {
  const primary = resultCode & 0xff;
  let found: string | undefined;
  // Map order is insertion order and remember() re-inserts: the last match is the newest.
  for (const [path, failure] of failures) {
    if ((path === dbPath || path.startsWith(`${dbPath}-`)) && (failure.rc & 0xff) === primary) found = path;
  }
  if (found === undefined) return undefined;
  const failure = failures.get(found);
  failures.delete(found);
  return failure?.error;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * One deferred WAL frame header. SQLite writes each WAL frame as two
 * consecutive writes: the 24-byte frame header, then the page right after it.
 * The header is held back (copied, 24 bytes) for exactly one file-layer call:
 * when that call is the page write at the adjacent offset, both go out as one
 * pwritev; any other call (on any file) first writes the header on its own.
 * Nothing can observe the file in between (other processes read the WAL only
 * after a WAL-index lock or push, which is a later call), so to SQLite and to
 * everyone else the header was written when xWrite returned. Syncs still sync
 * everything: xSync flushes first.
 */
const WAL_FRAME_HEADER = 24;
const pendingHeader = Buffer.alloc(WAL_FRAME_HEADER);
let pendingFd = -1;
let pendingPos = 0;

/** Writes `len` bytes of `buf` from `off` at file position `pos`, looping on short writes. */
function writeAll(fd: number, buf: Uint8Array, off: number, len: number, pos: number): void {
  let done = 0;
  while (done < len) {
    const put = writeSync(fd, buf, off + done, len - done, pos + done);
    done += put;
  }
}

/** Writes the deferred WAL frame header, if any. Throws on failure (the header is then dropped). */
function flushPendingHeader(): void {
  const fd = pendingFd;
  if (fd < 0) return;
  pendingFd = -1;
  writeAll(fd, pendingHeader, 0, WAL_FRAME_HEADER, pendingPos);
}

let installed = false;

/** Registers the file layer with SQLite (once per process). */
export function installNodeFsVfs(sqlite3: Sqlite3): void {
  if (installed) return;
  const { wasm, capi } = sqlite3;

  const ioMethods = new capi.sqlite3_io_methods();
  // Version 1 has no xShm* slots: SQLite then never enters WAL mode (except in
  // locking_mode=EXCLUSIVE, where it keeps the index in its own heap memory).
  ioMethods.$iVersion = SHARED_MEMORY ? 2 : 1;
  const vfs = new capi.sqlite3_vfs();
  vfs.$iVersion = 2;
  vfs.$szOsFile = capi.sqlite3_file.structInfo.sizeof;
  vfs.$mxPathname = 1024;
  vfs.$zName = wasm.allocCString(VFS_NAME);

  const heap = {
    heap8u: () => wasm.heap8u(),
    heap32: () => wasm.heap32(),
    alloc: (n: number) => wasm.alloc(n),
    dealloc: (p: number) => wasm.dealloc(p),
  };

  const fileOf = (pFile: number): OpenFile => {
    const f = files.get(pFile);
    if (f === undefined) throw new Error(`unknown sqlite3_file ${pFile}`);
    return f;
  };

  const io = {
    xClose(pFile: number): number {
      const f = files.get(pFile);
      if (f === undefined) return SQLITE_OK;
      files.delete(pFile);
      let rc = SQLITE_OK;
      try {
        if (pendingFd >= 0) flushPendingHeader();
      } catch (error) {
        rc = failed('xClose', error, SQLITE_IOERR_WRITE, f.path);
      }
      try {
        f.shm?.unmap(false);
      } catch (error) {
        rc = failed('xClose', error, SQLITE_IOERR, f.path);
      }
      try {
        f.record?.release();
      } catch (error) {
        rc = failed('xClose', error, SQLITE_IOERR, f.path);
      }
      if (f.connection !== undefined) closeConnectionNumber(f.connection);
      try {
        closeSync(f.fd);
        if (f.deleteOnClose) unlinkSync(f.path);
      } catch (error) {
        rc = failed('xClose', error, SQLITE_IOERR, f.path);
      }
      return rc;
    },
    xRead(pFile: number, pDest: number, n: number, offset: bigint): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const f = fileOf(pFile);
        let pos = Number(offset);
        let done = 0;
        const heap8 = wasm.heap8u();
        while (done < n) {
          const got = readSync(f.fd, heap8, pDest + done, n - done, pos);
          if (got === 0) break;
          done += got;
          pos += got;
        }
        if (done < n) {
          heap8.fill(0, pDest + done, pDest + n);
          return SQLITE_IOERR_SHORT_READ;
        }
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_READ', error, SQLITE_IOERR_READ, pFile);
      }
    },
    xWrite(pFile: number, pSrc: number, n: number, offset: bigint): number {
      try {
        const f = fileOf(pFile);
        const pos = Number(offset);
        const heap8 = wasm.heap8u();
        if (pendingFd >= 0) {
          if (pendingFd === f.fd && pendingPos + WAL_FRAME_HEADER === pos) {
            // Frame header + page: one pwritev.
            const start = pendingPos;
            pendingFd = -1;
            const total = WAL_FRAME_HEADER + n;
            const put = writevSync(f.fd, [pendingHeader, heap8.subarray(pSrc, pSrc + n)], start);
            if (put < WAL_FRAME_HEADER) {
              writeAll(f.fd, pendingHeader, put, WAL_FRAME_HEADER - put, start + put);
              writeAll(f.fd, heap8, pSrc, n, pos);
            } else if (put < total) {
              const rest = put - WAL_FRAME_HEADER;
              writeAll(f.fd, heap8, pSrc + rest, n - rest, pos + rest);
            }
            return SQLITE_OK;
          }
          flushPendingHeader();
        }
        if (n === WAL_FRAME_HEADER && (f.flags & OPEN_WAL) !== 0) {
          pendingHeader.set(heap8.subarray(pSrc, pSrc + n));
          pendingPos = pos;
          pendingFd = f.fd;
          return SQLITE_OK;
        }
        writeAll(f.fd, heap8, pSrc, n, pos);
        return SQLITE_OK;
      } catch (error) {
        pendingFd = -1;
        return failed('xWrite', error, errnoCode(error) === 'ENOSPC' ? SQLITE_FULL : SQLITE_IOERR_WRITE, pFile);
      }
    },
    xTruncate(pFile: number, size: bigint): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        ftruncateSync(fileOf(pFile).fd, Number(size));
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_TRUNCATE', error, SQLITE_IOERR_TRUNCATE, pFile);
      }
    },
    xSync(pFile: number, flags: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const f = fileOf(pFile);
        if (flags & SYNC_DATAONLY) fdatasyncSync(f.fd);
        else fsyncSync(f.fd);
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_FSYNC', error, SQLITE_IOERR_FSYNC, pFile);
      }
    },
    xFileSize(pFile: number, pSize: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        wasm.poke64(pSize, BigInt(fstatSync(fileOf(pFile).fd).size));
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_FSTAT', error, SQLITE_IOERR_FSTAT, pFile);
      }
    },
    xLock(pFile: number, level: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const lock = fileOf(pFile).lock;
        return lock === undefined ? SQLITE_OK : lock.lock(level);
      } catch (error) {
        return failed('SQLITE_IOERR_LOCK', error, SQLITE_IOERR_LOCK, pFile);
      }
    },
    xUnlock(pFile: number, level: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const lock = fileOf(pFile).lock;
        return lock === undefined ? SQLITE_OK : lock.unlock(level);
      } catch (error) {
        return failed('SQLITE_IOERR_UNLOCK', error, SQLITE_IOERR_UNLOCK, pFile);
      }
    },
    xCheckReservedLock(pFile: number, pOut: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const lock = fileOf(pFile).lock;
        wasm.poke32(pOut, lock !== undefined && lock.othersReserved() ? 1 : 0);
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_CHECKRESERVEDLOCK', error, SQLITE_IOERR_CHECKRESERVEDLOCK, pFile);
      }
    },
    xFileControl(): number {
      return SQLITE_NOTFOUND;
    },
    xSectorSize(): number {
      return SECTOR_SIZE;
    },
    xDeviceCharacteristics(): number {
      return IOCAP_POWERSAFE_OVERWRITE;
    },
  };

  /** SQLite shared memory for WAL mode: installed only when SHARED_MEMORY is on. */
  const shmMethods = {
    xShmMap(pFile: number, iRegion: number, szRegion: number, bExtend: number, pp: number): number {
      let f: OpenFile;
      try {
        if (pendingFd >= 0) flushPendingHeader();
        f = fileOf(pFile);
        if (f.record === undefined || f.lock === undefined) return SQLITE_IOERR_SHMOPEN;
        if (f.shm === undefined) {
          const shm = new ShmIndex(heap, f.record);
          f.shm = shm;
          f.lock.setHooks({
            onExclusive: () => shm.onDatabaseExclusive(),
            beforeExclusiveRelease: () => shm.beforeDatabaseExclusiveRelease(),
          });
        }
      } catch (error) {
        return failed('SQLITE_IOERR_SHMOPEN', error, SQLITE_IOERR_SHMOPEN, pFile);
      }
      try {
        wasm.pokePtr(pp, f.shm.map(iRegion, szRegion, bExtend !== 0));
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR_SHMMAP', error, SQLITE_IOERR_SHMMAP, pFile);
      }
    },
    xShmLock(pFile: number, ofst: number, n: number, flags: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const shm = fileOf(pFile).shm;
        if (shm === undefined) return SQLITE_IOERR_SHMLOCK;
        return shm.lock(ofst, n, flags);
      } catch (error) {
        return failed('SQLITE_IOERR_SHMLOCK', error, SQLITE_IOERR_SHMLOCK, pFile);
      }
    },
    xShmBarrier(): void {
      // The private copy only changes under our own control (pulls at lock
      // and sleep points), so there is nothing to order here. A deferred WAL
      // frame header is written now all the same (a failure is reported by
      // the next call that writes or syncs: SQLite never barriers between the
      // two writes of a frame, so this does not happen in practice).
      try {
        if (pendingFd >= 0) flushPendingHeader();
      } catch (error) {
        failed('xShmBarrier', error, SQLITE_IOERR_WRITE);
      }
    },
    xShmUnmap(pFile: number, deleteFlag: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
        const f = fileOf(pFile);
        const shm = f.shm;
        if (shm === undefined) return SQLITE_OK;
        f.shm = undefined;
        f.lock?.setHooks(undefined);
        shm.unmap(deleteFlag !== 0);
        return SQLITE_OK;
      } catch (error) {
        return failed('SQLITE_IOERR', error, SQLITE_IOERR, pFile);
      }
    },
  };

  const vfsMethods = {
    xOpen(_pVfs: number, zName: number, pFile: number, flags: number, pOutFlags: number): number {
      wasm.pokePtr(pFile, 0);
      try {
        if (pendingFd >= 0) flushPendingHeader();
      } catch (error) {
        return failed('xOpen', error, SQLITE_IOERR_WRITE);
      }
      let path: string;
      let anonymous = false;
      if (zName === 0) {
        path = join(tmpdir(), `agentbus-sqlite-${randomBytes(8).toString('hex')}`);
        anonymous = true;
      } else {
        path = wasm.cstrToJs(zName);
      }
      const writable = (flags & OPEN_READWRITE) !== 0;
      let oflags = writable ? fsc.O_RDWR : fsc.O_RDONLY;
      if (flags & OPEN_CREATE) oflags |= fsc.O_CREAT;
      if (flags & OPEN_EXCLUSIVE || anonymous) oflags |= fsc.O_EXCL;
      let fd: number;
      let outFlags = flags;
      try {
        fd = openSync(path, oflags, 0o600);
      } catch (error) {
        const code = errnoCode(error);
        if (writable && (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') && !(flags & OPEN_CREATE)) {
          try {
            fd = openSync(path, fsc.O_RDONLY);
            outFlags = (flags & ~OPEN_READWRITE) | OPEN_READONLY;
          } catch (error) {
            return failed('SQLITE_CANTOPEN', error, SQLITE_CANTOPEN, path);
          }
        } else {
          return failed('SQLITE_CANTOPEN', error, SQLITE_CANTOPEN, path);
        }
      }
      if (anonymous) {
        try {
          unlinkSync(path);
        } catch {
          // Left for the OS temp cleaner.
        }
      }
      let file: OpenFile;
      if (flags & OPEN_MAIN_DB) {
        const connection = openConnectionNumber();
        let record: LockRecord;
        try {
          record = LockRecord.claim(path, selfOwner(connection));
        } catch (error) {
          failed('claim lock record', error, SQLITE_CANTOPEN, path);
          closeConnectionNumber(connection);
          closeSync(fd);
          return SQLITE_CANTOPEN;
        }
        file = { fd, path, flags, deleteOnClose: false, connection, record, lock: new DatabaseLock(record) };
      } else {
        file = { fd, path, flags, deleteOnClose: !anonymous && (flags & OPEN_DELETEONCLOSE) !== 0 };
      }
      files.set(pFile, file);
      wasm.pokePtr(pFile, ioMethods.pointer);
      if (pOutFlags) wasm.poke32(pOutFlags, outFlags);
      return SQLITE_OK;
    },
    xDelete(_pVfs: number, zName: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
      } catch (error) {
        return failed('xDelete', error, SQLITE_IOERR_WRITE);
      }
      const path = wasm.cstrToJs(zName);
      try {
        unlinkSync(path);
        return SQLITE_OK;
      } catch (error) {
        return errnoCode(error) === 'ENOENT' ? SQLITE_IOERR_DELETE_NOENT : failed('xDelete', error, SQLITE_IOERR_DELETE, path);
      }
    },
    xAccess(_pVfs: number, zName: number, flags: number, pOut: number): number {
      try {
        if (pendingFd >= 0) flushPendingHeader();
      } catch (error) {
        return failed('xAccess', error, SQLITE_IOERR_WRITE);
      }
      const path = wasm.cstrToJs(zName);
      let ok = false;
      try {
        if (flags === ACCESS_EXISTS) {
          // As unix does: an empty regular file (e.g. a zero-length -wal) does not count.
          const st = statSync(path, { throwIfNoEntry: false });
          ok = st !== undefined && (!st.isFile() || st.size > 0);
        } else {
          accessSync(path, fsc.R_OK | fsc.W_OK);
          ok = true;
        }
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT' && errnoCode(error) !== 'EACCES') return failed('xAccess', error, SQLITE_IOERR_ACCESS, path);
      }
      wasm.poke32(pOut, ok ? 1 : 0);
      return SQLITE_OK;
    },
    xFullPathname(_pVfs: number, zName: number, nOut: number, zOut: number): number {
      const full = Buffer.from(resolve(wasm.cstrToJs(zName)), 'utf8');
      if (full.length + 1 > nOut) return SQLITE_CANTOPEN;
      const heap8 = wasm.heap8u();
      heap8.set(full, zOut);
      heap8[zOut + full.length] = 0;
      return SQLITE_OK;
    },
    xRandomness(_pVfs: number, n: number, zOut: number): number {
      randomFillSync(wasm.heap8u(), zOut, n);
      return n;
    },
    xSleep(_pVfs: number, micros: number): number {
      count('sleep');
      count('sleep.us', micros);
      // Trap 1: SQLite may read the WAL index without a lock after sleeping; make that read fresh.
      try {
        if (pendingFd >= 0) flushPendingHeader();
        refreshAllIndexes();
      } catch {
        // A failed refresh only means the next lock will pull.
      }
      sleepSync(micros / 1000);
      try {
        refreshAllIndexes();
      } catch {
        // As above.
      }
      return micros;
    },
    xCurrentTime(_pVfs: number, pOut: number): number {
      wasm.poke(pOut, Date.now() / 86400000 + 2440587.5, 'double');
      return SQLITE_OK;
    },
    xCurrentTimeInt64(_pVfs: number, pOut: number): number {
      wasm.poke64(pOut, BigInt(Date.now()) + 210866760000000n);
      return SQLITE_OK;
    },
    xGetLastError(_pVfs: number, nBuf: number, zBuf: number): number {
      // SQLite asks after a CANTOPEN or IOERR (sqlite3_system_errno); the text goes to the buffer.
      const failure = newestFailure;
      if (failure === undefined) return 0;
      if (nBuf > 0 && zBuf) {
        const text = Buffer.from(failure.error.message, 'utf8').subarray(0, nBuf - 1);
        const heap8 = wasm.heap8u();
        heap8.set(text, zBuf);
        heap8[zBuf + text.length] = 0;
      }
      const errno = (failure.error as NodeJS.ErrnoException).errno;
      return typeof errno === 'number' && errno !== 0 ? Math.abs(errno) : 1;
    },
  };

  sqlite3.vfs.installVfs({
    io: {
      struct: ioMethods,
      methods: (SHARED_MEMORY ? { ...io, ...shmMethods } : io) as unknown as Record<string, (...args: never[]) => number | void>,
    },
    vfs: { struct: vfs, methods: vfsMethods as unknown as Record<string, (...args: never[]) => number | void> },
  });
  installed = true;
}
