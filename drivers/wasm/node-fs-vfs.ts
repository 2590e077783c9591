/**
 * SQLite's file layer (VFS) over synchronous node:fs: its state, one
 * NodeFsVfs per SQLite runtime, and its registration. Files are real files
 * on disk in SQLite's own formats, so stock SQLite can read them when no
 * agentbus process runs. The C calls are converted to JavaScript values once
 * in vfs-facade.ts; the file semantics are vfs-files.ts; the locking policy
 * (the `portable` protocol over the lock table, the WAL index of
 * shm-index.ts, sleeps that block with Atomics.wait) is vfs-locking.ts.
 */
import { closeSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import type { LockRecord, Refusal } from './lock-table.js';
import type { DatabaseLock } from './portable-locks.js';
import type { ShmIndex } from './shm-index.js';
import { closeConnectionNumber, liveness } from './owner-liveness.js';
import { SQLITE_BUSY, SQLITE_FULL, SQLITE_IOERR, SQLITE_IOERR_WRITE, SQLITE_OK, SQLITE_OPEN_WAL as OPEN_WAL } from './sqlite-codes.js';

/** The name the file layer registers under. */
export const VFS_NAME = 'agentbus-nodefs';

/** The state behind one sqlite3_file. */
export interface OpenFile {
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
  /** The database this file belongs to (main, `-wal`, `-journal`); undefined for temporary files. */
  readonly dbPath: string | undefined;
  /** When it was opened, for fencing (owner-liveness.ts): files opened before a fence stay fenced. */
  readonly generation: number;
}

const debug = process.env.AGENTBUS_WASM_DEBUG === '1';

/** A failure inside the file layer: what SQLite was told (`rc`) and why. */
interface FileLayerFailure {
  readonly rc: number;
  readonly error: Error;
}

/** Failures kept per file path; a file layer that fails for many distinct paths forgets the oldest. */
const MAX_FAILURES_KEPT = 64;

/**
 * SQLite writes each WAL frame as two consecutive writes: the 24-byte frame
 * header, then the page right after it. The header is held back (copied) for
 * exactly one file-layer call: when that call is the page write at the
 * adjacent offset, both go out as one pwritev; any other call (on any file)
 * first writes the header on its own. Nothing can observe the file in
 * between (other processes read the WAL only after a WAL-index lock or push,
 * which is a later call), so to SQLite and to everyone else the header was
 * written when xWrite returned. Syncs still sync everything: xSync flushes
 * first.
 */
const WAL_FRAME_HEADER = 24;

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Writes `len` bytes of `buf` from `off` at file position `pos`, looping on short writes. */
function writeAll(fd: number, buf: Uint8Array, off: number, len: number, pos: number): void {
  let done = 0;
  while (done < len) {
    const put = writeSync(fd, buf, off + done, len - done, pos + done);
    done += put;
  }
}

/** A file-layer method on an open file, after the common work (see NodeFsVfs.onFile). */
type FileMethod<A extends unknown[]> = (f: OpenFile, ...args: A) => number;

/**
 * The file layer's state, one per SQLite runtime (the VFS is registered once
 * in it): the open files, the held-back WAL frame header, and the failures
 * it remembers so that errors can say why. Every method SQLite calls goes
 * through onFile or onVfs, which do the work common to all of them.
 */
export class NodeFsVfs {
  readonly #files = new Map<number, OpenFile>();
  /** The last failure per file path (the database, its -wal and -journal); Map order is age order. */
  readonly #failures = new Map<string, FileLayerFailure>();
  /** The newest failure of all, for xGetLastError. */
  #newestFailure: FileLayerFailure | undefined;
  /** The held-back WAL frame header: its bytes, its file (undefined when none is held) and position. */
  readonly #header = Buffer.alloc(WAL_FRAME_HEADER);
  #headerFile: OpenFile | undefined;
  #headerPos = 0;
  /** A failure no call could report when it happened (xShmBarrier, xSleep): the next call reports it. */
  #unreported: FileLayerFailure | undefined;
  /** The WAL indexes of the open files that have one. */
  readonly #indexes = new Set<ShmIndex>();
  /** What the last SQLITE_BUSY from a lock was waiting for, until the busy wait takes it. */
  #refusal: Refusal | undefined;

  /** Answers a lock request: SQLITE_OK when granted; else SQLITE_BUSY, keeping the refusal for the busy wait. */
  answer(refusal: Refusal | undefined): number {
    if (refusal === undefined) return SQLITE_OK;
    this.#refusal = refusal;
    return SQLITE_BUSY;
  }

  /** Takes (and forgets) what the last SQLITE_BUSY from a lock was waiting for (BusyWaitSource). */
  takeRefusal(): Refusal | undefined {
    const refusal = this.#refusal;
    this.#refusal = undefined;
    return refusal;
  }

  /** Gives a main database file its WAL index. */
  addIndex(f: OpenFile, shm: ShmIndex): void {
    f.shm = shm;
    this.#indexes.add(shm);
  }

  /** Takes a main database file's WAL index away (it is unmapped next). */
  removeIndex(f: OpenFile): ShmIndex | undefined {
    const shm = f.shm;
    if (shm === undefined) return undefined;
    f.shm = undefined;
    this.#indexes.delete(shm);
    return shm;
  }

  /** Pulls every open WAL index of this process: after a sleep (trap 1) and a busy wait (BusyWaitSource). */
  refreshIndexes(): void {
    for (const index of this.#indexes) index.refresh();
  }

  /**
   * Pulls every open WAL index of this process at the start of a statement,
   * except an index whose connection holds a WAL-index slot: it is inside a
   * transaction whose snapshot SQLite fixed when that slot was granted (and
   * the grant pulled). See docs/drivers.md, "Syscalls per commit".
   */
  refreshIndexesBeforeStatement(): void {
    for (const index of this.#indexes) if (!index.holdsSlot()) index.refresh();
  }

  /**
   * The open file behind a sqlite3_file pointer; throws for one this layer
   * did not open, and for a fenced one. Every wrapped file method comes
   * through here, so it also renews this process's leases when due (a long
   * statement keeps them alive).
   */
  fileOf(pFile: number): OpenFile {
    const f = this.#files.get(pFile);
    if (f === undefined) throw new Error(`unknown sqlite3_file ${pFile}`);
    liveness.tick();
    const fenced = liveness.fencedReason(f.dbPath, f.generation);
    if (fenced !== undefined) throw new Error(fenced);
    return f;
  }

  /** Registers a file SQLite opened. */
  add(pFile: number, file: OpenFile): void {
    this.#files.set(pFile, file);
  }

  /** Unregisters and returns a file SQLite closes, or undefined when it is not one of ours. */
  remove(pFile: number): OpenFile | undefined {
    const f = this.#files.get(pFile);
    if (f !== undefined) this.#files.delete(pFile);
    return f;
  }

  /**
   * Records a failure inside the file layer and returns the SQLite code to
   * answer with: `rc`, or SQLITE_FULL when the disk is full. With
   * AGENTBUS_WASM_DEBUG=1 also says what failed on stderr.
   */
  failed(where: string, error: unknown, rc: number, path?: string): number {
    const code = errnoCode(error) === 'ENOSPC' ? SQLITE_FULL : rc;
    if (debug) process.stderr.write(`agentbus wasm vfs: ${where}: ${(error as Error)?.stack ?? String(error)}\n`);
    const failure = { rc: code, error: error instanceof Error ? error : new Error(String(error)) };
    this.#newestFailure = failure;
    if (path !== undefined) {
      const failures = this.#failures;
      failures.delete(path);
      failures.set(path, failure);
      if (failures.size > MAX_FAILURES_KEPT) failures.delete(failures.keys().next().value as string);
    }
    return code;
  }

  /**
   * Takes (and forgets) the last file-layer failure behind a SQLite error of
   * the database at `dbPath` (its own file, -wal or -journal) whose primary
   * result code matches `resultCode`, or undefined when none is known.
   */
  takeFailure(dbPath: string, resultCode: number): Error | undefined {
    const primary = resultCode & 0xff;
    let found: string | undefined;
    // The last match is the newest (failed() re-inserts).
    for (const [path, failure] of this.#failures) {
      if ((path === dbPath || path.startsWith(`${dbPath}-`)) && (failure.rc & 0xff) === primary) found = path;
    }
    if (found === undefined) return undefined;
    const failure = this.#failures.get(found);
    this.#failures.delete(found);
    return failure?.error;
  }

  /** The newest failure of all (xGetLastError), or undefined. */
  get newestFailure(): FileLayerFailure | undefined {
    return this.#newestFailure;
  }

  /**
   * The work before every method: writes the held-back WAL frame header and
   * hands over a failure an earlier call could not report (`flush` false:
   * only the latter, for xWrite). Returns SQLITE_OK, or the code this call
   * must answer with instead of doing its work.
   */
  #enter(flush = true): number {
    if (flush && this.#headerFile !== undefined) {
      const file = this.#headerFile;
      try {
        this.#flushHeader();
      } catch (error) {
        return this.failed('writing a WAL frame header', error, SQLITE_IOERR_WRITE, file.path);
      }
    }
    const unreported = this.#unreported;
    if (unreported === undefined) return SQLITE_OK;
    this.#unreported = undefined;
    return unreported.rc;
  }

  /**
   * The work before a method that cannot return a code (xShmBarrier) or
   * must not fail (xSleep): a failure to write the held-back header is
   * recorded and reported by the next call instead.
   */
  enterDeferred(): void {
    const file = this.#headerFile;
    if (file === undefined) return;
    try {
      this.#flushHeader();
    } catch (error) {
      const rc = this.failed('writing a WAL frame header', error, SQLITE_IOERR_WRITE, file.path);
      this.#unreported = { rc, error: error as Error };
    }
  }

  /** Writes the held-back WAL frame header, if any. Throws on failure (the header is then dropped). */
  #flushHeader(): void {
    const file = this.#headerFile;
    if (file === undefined) return;
    this.#headerFile = undefined;
    writeAll(file.fd, this.#header, 0, WAL_FRAME_HEADER, this.#headerPos);
  }

  /**
   * xWrite's work: a WAL frame header is held back; the page right after a
   * held-back header goes out with it in one pwritev; anything else first
   * writes a held-back header, then itself.
   */
  write(f: OpenFile, heap8: Uint8Array, pSrc: number, n: number, pos: number): void {
    const held = this.#headerFile;
    if (held !== undefined) {
      if (held === f && this.#headerPos + WAL_FRAME_HEADER === pos) {
        const start = this.#headerPos;
        this.#headerFile = undefined;
        const header = this.#header;
        const total = WAL_FRAME_HEADER + n;
        const put = writevSync(f.fd, [header, heap8.subarray(pSrc, pSrc + n)], start);
        if (put < WAL_FRAME_HEADER) {
          writeAll(f.fd, header, put, WAL_FRAME_HEADER - put, start + put);
          writeAll(f.fd, heap8, pSrc, n, pos);
        } else if (put < total) {
          const rest = put - WAL_FRAME_HEADER;
          writeAll(f.fd, heap8, pSrc + rest, n - rest, pos + rest);
        }
        return;
      }
      this.#flushHeader();
    }
    if (n === WAL_FRAME_HEADER && (f.flags & OPEN_WAL) !== 0) {
      this.#header.set(heap8.subarray(pSrc, pSrc + n));
      this.#headerPos = pos;
      this.#headerFile = f;
      return;
    }
    writeAll(f.fd, heap8, pSrc, n, pos);
  }

  /**
   * Wraps a method on an open file (its first argument a sqlite3_file
   * pointer) with the common work: the held-back header first (except for
   * xWrite, `flushFirst` false, which handles it itself), a thrown error
   * recorded and answered with `rc`. A held-back header is dropped when the
   * method fails.
   */
  onFile<A extends unknown[]>(where: string, rc: number, method: FileMethod<A>, flushFirst = true): (pFile: number, ...args: A) => number {
    // Fixed arity instead of rest arguments: these run once per page read and written.
    const body = method as unknown as (f: OpenFile, a: unknown, b: unknown, c: unknown, d: unknown) => number;
    const wrapped = (pFile: number, a: unknown, b: unknown, c: unknown, d: unknown): number => {
      let path: string | undefined;
      try {
        if (this.#unreported !== undefined || (flushFirst && this.#headerFile !== undefined)) {
          const early = this.#enter(flushFirst);
          if (early !== SQLITE_OK) return early;
        }
        const f = this.fileOf(pFile);
        path = f.path;
        return body(f, a, b, c, d);
      } catch (error) {
        this.#headerFile = undefined;
        return this.failed(where, error, rc, path);
      }
    };
    return wrapped as unknown as (pFile: number, ...args: A) => number;
  }

  /**
   * Wraps a method on the VFS itself (xOpen, xDelete, xAccess) with the
   * common work: the held-back header first, a thrown error recorded and
   * answered with `rc` (a method records failures with a path itself).
   */
  onVfs<A extends unknown[]>(where: string, rc: number, method: (...args: A) => number): (...args: A) => number {
    const body = method as unknown as (a: unknown, b: unknown, c: unknown, d: unknown, e: unknown) => number;
    const wrapped = (a: unknown, b: unknown, c: unknown, d: unknown, e: unknown): number => {
      try {
        const early = this.#enter();
        if (early !== SQLITE_OK) return early;
        return body(a, b, c, d, e);
      } catch (error) {
        return this.failed(where, error, rc);
      }
    };
    return wrapped as unknown as (...args: A) => number;
  }

  /**
   * xClose's work: closes everything of the file even when a step fails,
   * and answers with the last failure.
   */
  close(pFile: number): number {
    const f = this.remove(pFile);
    if (f === undefined) return SQLITE_OK;
    // A fenced connection writes nothing more: its locks may be someone else's by now.
    const fenced = liveness.fencedReason(f.dbPath, f.generation) !== undefined;
    let rc = this.#enter();
    try {
      const shm = this.removeIndex(f);
      if (fenced) shm?.forget();
      else shm?.unmap(false);
    } catch (error) {
      rc = this.failed('xClose', error, SQLITE_IOERR, f.path);
    }
    try {
      f.record?.release();
    } catch (error) {
      rc = this.failed('xClose', error, SQLITE_IOERR, f.path);
    }
    if (f.connection !== undefined) closeConnectionNumber(f.connection);
    try {
      closeSync(f.fd);
      if (f.deleteOnClose) unlinkSync(f.path);
    } catch (error) {
      rc = this.failed('xClose', error, SQLITE_IOERR, f.path);
    }
    return rc;
  }
}
