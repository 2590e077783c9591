/**
 * The facade between SQLite's C calls and the file layer, as wa-sqlite's
 * FacadeVFS: each raw xMethod turns its C arguments (pointers, 64-bit
 * offsets as bigint, C strings) into JavaScript values once, calls the file
 * semantics (vfs-files.ts) or the locking policy (vfs-locking.ts), and
 * writes the results back through their output pointers. The common work of
 * every call (the held-back WAL frame header, errors mapped to codes and
 * recorded) is the layer's wrappers, NodeFsVfs.onFile and onVfs.
 */
import { randomFillSync } from 'node:crypto';
import { readCString } from './c-string.js';
import type { WasmHeap } from './shm-index.js';
import {
  SQLITE_CANTOPEN,
  SQLITE_IOERR,
  SQLITE_IOERR_ACCESS,
  SQLITE_IOERR_CHECKRESERVEDLOCK,
  SQLITE_IOERR_DELETE,
  SQLITE_IOERR_FSTAT,
  SQLITE_IOERR_FSYNC,
  SQLITE_IOERR_LOCK,
  SQLITE_IOERR_READ,
  SQLITE_IOERR_SHMLOCK,
  SQLITE_IOERR_SHMMAP,
  SQLITE_IOERR_TRUNCATE,
  SQLITE_IOERR_UNLOCK,
  SQLITE_IOERR_WRITE,
  SQLITE_NOTFOUND,
  SQLITE_OK,
} from './sqlite-codes.js';
import type { Sqlite3, SqliteStructType, SqliteWasm } from './sqlite-runtime.js';
import * as files from './vfs-files.js';
import * as locking from './vfs-locking.js';
import { wordDiff } from './word-diff.js';
import type { NodeFsVfs } from './node-fs-vfs.js';

const IOCAP_POWERSAFE_OVERWRITE = 0x1000;
const SECTOR_SIZE = 4096;
/** Julian day of the Unix epoch, and the same in milliseconds (SQLite's clock units). */
const UNIX_EPOCH_JULIAN_DAY = 2440587.5;
const UNIX_EPOCH_JULIAN_MS = 210866760000000n;
const MS_PER_DAY = 86400000;

type Methods = Record<string, (...args: never[]) => number | void>;

/** Writes `text` NUL-terminated at `zOut` (at most `nOut` bytes with the NUL); false when it does not fit. */
function pokeCString(wasm: SqliteWasm, zOut: number, nOut: number, text: Buffer): boolean {
  if (text.length + 1 > nOut) return false;
  const heap8 = wasm.heap8u();
  heap8.set(text, zOut);
  heap8[zOut + text.length] = 0;
  return true;
}

/** The wasm heap access the WAL indexes need. */
function wasmHeap(wasm: SqliteWasm): WasmHeap {
  return {
    heap8u: () => wasm.heap8u(),
    heap32: () => wasm.heap32(),
    alloc: (n: number) => wasm.alloc(n),
    dealloc: (p: number) => wasm.dealloc(p),
    diff: wordDiff(wasm.memory),
  };
}

/** The methods of an open file (sqlite3_io_methods, version 2: with the xShm* methods, hence WAL mode). */
function ioMethods(layer: NodeFsVfs, wasm: SqliteWasm): Methods {
  const heap = wasmHeap(wasm);
  const io = {
    xClose: (pFile: number): number => layer.close(pFile),
    xRead: layer.onFile('xRead', SQLITE_IOERR_READ, (f, pDest: number, n: number, offset: bigint) => files.readAt(f, wasm.heap8u(), pDest, n, Number(offset))),
    xWrite: layer.onFile(
      'xWrite',
      SQLITE_IOERR_WRITE,
      (f, pSrc: number, n: number, offset: bigint) => {
        layer.write(f, wasm.heap8u(), pSrc, n, Number(offset));
        return SQLITE_OK;
      },
      false,
    ),
    xTruncate: layer.onFile('xTruncate', SQLITE_IOERR_TRUNCATE, (f, size: bigint) => {
      files.truncate(f, Number(size));
      return SQLITE_OK;
    }),
    xSync: layer.onFile('xSync', SQLITE_IOERR_FSYNC, (f, flags: number) => {
      files.sync(f, flags);
      return SQLITE_OK;
    }),
    xFileSize: layer.onFile('xFileSize', SQLITE_IOERR_FSTAT, (f, pSize: number) => {
      wasm.poke64(pSize, BigInt(files.fileSize(f)));
      return SQLITE_OK;
    }),
    xLock: layer.onFile('xLock', SQLITE_IOERR_LOCK, (f, level: number) => locking.lock(layer, f, level)),
    xUnlock: layer.onFile('xUnlock', SQLITE_IOERR_UNLOCK, (f, level: number) => locking.unlock(f, level)),
    xCheckReservedLock: layer.onFile('xCheckReservedLock', SQLITE_IOERR_CHECKRESERVEDLOCK, (f, pOut: number) => {
      wasm.poke32(pOut, locking.othersReserved(f) ? 1 : 0);
      return SQLITE_OK;
    }),
    xFileControl: (): number => SQLITE_NOTFOUND,
    xSectorSize: (): number => SECTOR_SIZE,
    xDeviceCharacteristics: (): number => IOCAP_POWERSAFE_OVERWRITE,
    xShmMap: layer.onFile('xShmMap', SQLITE_IOERR_SHMMAP, (f, iRegion: number, szRegion: number, bExtend: number, pp: number) => {
      const mapped = locking.shmMap(layer, heap, f, iRegion, szRegion, bExtend !== 0);
      if (typeof mapped === 'number') return mapped;
      wasm.pokePtr(pp, mapped.pointer);
      return SQLITE_OK;
    }),
    xShmLock: layer.onFile('xShmLock', SQLITE_IOERR_SHMLOCK, (f, ofst: number, n: number, flags: number) => locking.shmLock(layer, f, ofst, n, flags)),
    // The private copy of the WAL index only changes under our own control (pulls at lock and
    // sleep points), so a barrier has nothing to order; it writes a held-back WAL frame header
    // all the same, and a failure is reported by the next call (a barrier returns no code).
    xShmBarrier: (): void => layer.enterDeferred(),
    xShmUnmap: layer.onFile('xShmUnmap', SQLITE_IOERR, (f, deleteFlag: number) => {
      locking.shmUnmap(layer, f, deleteFlag !== 0);
      return SQLITE_OK;
    }),
  };
  return io as unknown as Methods;
}

/** xOpen, after its output pointer is cleared: the name read, the file opened and registered, its flags reported. */
function opener(layer: NodeFsVfs, wasm: SqliteWasm, io: SqliteStructType) {
  return layer.onVfs('xOpen', SQLITE_CANTOPEN, (_pVfs: number, zName: number, pFile: number, flags: number, pOutFlags: number) => {
    const opened = files.openFile(layer, zName === 0 ? undefined : readCString(wasm, zName), flags);
    if (typeof opened === 'number') return opened;
    layer.add(pFile, opened.file);
    wasm.pokePtr(pFile, io.pointer);
    if (pOutFlags) wasm.poke32(pOutFlags, opened.outFlags);
    return SQLITE_OK;
  });
}

/** xGetLastError: the newest failure's message into the buffer, its errno (or 1) returned; 0 when none. */
function lastError(layer: NodeFsVfs, wasm: SqliteWasm, nBuf: number, zBuf: number): number {
  const failure = layer.newestFailure;
  if (failure === undefined) return 0;
  if (nBuf > 0 && zBuf) pokeCString(wasm, zBuf, nBuf, Buffer.from(failure.error.message, 'utf8').subarray(0, nBuf - 1));
  const errno = (failure.error as NodeJS.ErrnoException).errno;
  return typeof errno === 'number' && errno !== 0 ? Math.abs(errno) : 1;
}

/** The methods of the VFS itself (sqlite3_vfs, version 2). */
function vfsMethods(layer: NodeFsVfs, wasm: SqliteWasm, io: SqliteStructType): Methods {
  const open = opener(layer, wasm, io);
  const methods = {
    xOpen(pVfs: number, zName: number, pFile: number, flags: number, pOutFlags: number): number {
      wasm.pokePtr(pFile, 0);
      return open(pVfs, zName, pFile, flags, pOutFlags);
    },
    xDelete: layer.onVfs('xDelete', SQLITE_IOERR_DELETE, (_pVfs: number, zName: number) => files.deleteFile(layer, readCString(wasm, zName))),
    xAccess: layer.onVfs('xAccess', SQLITE_IOERR_ACCESS, (_pVfs: number, zName: number, flags: number, pOut: number) => {
      const ok = files.access(layer, readCString(wasm, zName), flags);
      if (typeof ok === 'number') return ok;
      wasm.poke32(pOut, ok ? 1 : 0);
      return SQLITE_OK;
    }),
    xFullPathname: (_pVfs: number, zName: number, nOut: number, zOut: number): number =>
      pokeCString(wasm, zOut, nOut, Buffer.from(files.fullPathname(readCString(wasm, zName)), 'utf8')) ? SQLITE_OK : SQLITE_CANTOPEN,
    xRandomness(_pVfs: number, n: number, zOut: number): number {
      randomFillSync(wasm.heap8u(), zOut, n);
      return n;
    },
    xSleep(_pVfs: number, micros: number): number {
      locking.sleep(layer, micros);
      return micros;
    },
    xCurrentTime(_pVfs: number, pOut: number): number {
      wasm.poke(pOut, Date.now() / MS_PER_DAY + UNIX_EPOCH_JULIAN_DAY, 'double');
      return SQLITE_OK;
    },
    xCurrentTimeInt64(_pVfs: number, pOut: number): number {
      wasm.poke64(pOut, BigInt(Date.now()) + UNIX_EPOCH_JULIAN_MS);
      return SQLITE_OK;
    },
    xGetLastError: (_pVfs: number, nBuf: number, zBuf: number): number => lastError(layer, wasm, nBuf, zBuf),
  };
  return methods as unknown as Methods;
}

/** Registers the file layer `layer` with SQLite under `name`. */
export function registerFacade(sqlite3: Sqlite3, layer: NodeFsVfs, name: string): void {
  const { wasm, capi } = sqlite3;
  const io = new capi.sqlite3_io_methods();
  // Version 2 adds the xShm* methods: SQLite shared memory, hence WAL mode (shm-index.ts).
  io.$iVersion = 2;
  const vfs = new capi.sqlite3_vfs();
  vfs.$iVersion = 2;
  vfs.$szOsFile = capi.sqlite3_file.structInfo.sizeof;
  vfs.$mxPathname = 1024;
  vfs.$zName = wasm.allocCString(name);
  sqlite3.vfs.installVfs({
    io: { struct: io, methods: ioMethods(layer, wasm) },
    vfs: { struct: vfs, methods: vfsMethods(layer, wasm, io) },
  });
}
