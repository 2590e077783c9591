/**
 * The locking policy of the wasm file layer, in JavaScript values
 * (vfs-facade.ts converts SQLite's pointers once): database lock levels on
 * the lock table (portable-locks.ts), the WAL index and its slot locks
 * (shm-index.ts), and what a sleep does around the WAL index. A refused lock
 * answers SQLITE_BUSY and leaves its refusal with the layer for the busy
 * wait (busy-wait.ts).
 */
import { sleepSync } from '../../src/db/contract/sleep-sync.js';
import { settleReleases } from './lock-table.js';
import { liveness } from './owner-liveness.js';
import { ShmIndex, type WasmHeap } from './shm-index.js';
import { SQLITE_IOERR_SHMLOCK, SQLITE_IOERR_SHMOPEN, SQLITE_OK } from './sqlite-codes.js';
import { count } from './vfs-stats.js';
import type { NodeFsVfs, OpenFile } from './node-fs-vfs.js';

/** xLock's work: files other than main databases take no locks. */
export function lock(layer: NodeFsVfs, f: OpenFile, level: number): number {
  return f.lock === undefined ? SQLITE_OK : layer.answer(f.lock.lock(level));
}

/** xUnlock's work. */
export function unlock(f: OpenFile, level: number): number {
  return f.lock === undefined ? SQLITE_OK : f.lock.unlock(level);
}

/** xCheckReservedLock's work: whether another connection holds RESERVED or above. */
export function othersReserved(f: OpenFile): boolean {
  return f.lock !== undefined && f.lock.othersReserved();
}

/** The file's WAL index, opened (and its database-lock hooks set) on first use; or the code to answer with. */
function indexOf(layer: NodeFsVfs, heap: WasmHeap, f: OpenFile): ShmIndex | number {
  if (f.shm !== undefined) return f.shm;
  if (f.record === undefined || f.lock === undefined) return SQLITE_IOERR_SHMOPEN;
  try {
    const opened = new ShmIndex(heap, f.record);
    layer.addIndex(f, opened);
    f.lock.setHooks({
      onExclusive: () => opened.onDatabaseExclusive(),
      beforeExclusiveRelease: () => opened.beforeDatabaseExclusiveRelease(),
    });
    return opened;
  } catch (error) {
    return layer.failed('xShmMap', error, SQLITE_IOERR_SHMOPEN, f.path);
  }
}

/** xShmMap's work: the wasm address of WAL-index region `region`, or the code to answer with. */
export function shmMap(layer: NodeFsVfs, heap: WasmHeap, f: OpenFile, region: number, size: number, extend: boolean): { pointer: number } | number {
  const shm = indexOf(layer, heap, f);
  if (typeof shm === 'number') return shm;
  return { pointer: shm.map(region, size, extend) };
}

/** xShmLock's work: a WAL-index slot lock (SQLITE_SHM_* flags). */
export function shmLock(layer: NodeFsVfs, f: OpenFile, offset: number, n: number, flags: number): number {
  return f.shm === undefined ? SQLITE_IOERR_SHMLOCK : layer.answer(f.shm.lock(offset, n, flags));
}

/** xShmUnmap's work: the WAL index closed, its file deleted when `deleteIt`. */
export function shmUnmap(layer: NodeFsVfs, f: OpenFile, deleteIt: boolean): void {
  const shm = layer.removeIndex(f);
  if (shm === undefined) return;
  f.lock?.setHooks(undefined);
  shm.unmap(deleteIt);
}

/** Pulls every WAL index of the layer (after renewing the leases when `tick`); a failure only means the next lock will pull. */
function refreshQuietly(layer: NodeFsVfs, tick: boolean): void {
  try {
    if (tick) liveness.tick();
    layer.refreshIndexes();
  } catch {
    // As above.
  }
}

/**
 * xSleep's work: blocks (Atomics.wait) for `micros`. Trap 1: SQLite may read
 * the WAL index without a lock after sleeping, so the indexes are pulled
 * before and after (and the leases renewed).
 */
export function sleep(layer: NodeFsVfs, micros: number): void {
  count('sleep');
  count('sleep.us', micros);
  layer.enterDeferred();
  settleReleases();
  refreshQuietly(layer, true);
  sleepSync(micros / 1000);
  refreshQuietly(layer, false);
}
