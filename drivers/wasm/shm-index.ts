/**
 * The cross-process WAL index. Node cannot mmap, so SQLite's shared-memory
 * index lives privately in wasm memory (one 32 KiB allocation per region) and
 * is synchronised with the `<db>-shm` file by copying: a shadow copy of each
 * region remembers what was last exchanged with the file, so a push writes
 * only the 4-byte words SQLite changed here, and a pull copies in only the
 * words someone else changed there. The file keeps SQLite's own format.
 *
 * When: push+pull after every shm lock taken (and after a refusal, so a
 * retry sees progress), push before every exclusive shm lock is released,
 * pull inside every sleep (trap 1), full sync when the database lock reaches
 * EXCLUSIVE and push before it is released (trap 2), and a re-check of
 * nBackfill on fresh data when READ_LOCK(0) is granted (trap 3). The three
 * traps are described in docs/drivers.md, "The WAL index across processes".
 *
 * Why this is enough: SQLite only writes the index while holding an exclusive
 * shm lock (or the database EXCLUSIVE lock), hash tables only under
 * WAL_WRITE_LOCK, and it validates the lock-free header reads against a
 * checksummed double copy. A push writes hash tables first and the header last
 * (copy 1 before copy 0, the order SQLite itself stores them), and a pull reads
 * the header first, so whoever sees a new header also sees its hash entries.
 *
 * Every push bumps a stamp in the pusher's own lock-table record. Each lock
 * attempt reads the lock table anyway, so a pull first compares the other
 * records' stamps with those seen at the last pull and skips the 32 KiB read
 * when none moved. Stamps live one per record, so concurrent pushers never
 * overwrite each other's announcement, and a record's stamp survives its
 * release (the next owner goes on counting), so a process that opened,
 * committed and closed between two looks still leaves its mark. Bytes 120..127 (SQLite's unused
 * aLock[] placeholder) are never synchronised.
 *
 * A pull installs a snapshot of ONE moment (double collect): a region is taken
 * only from two consecutive reads that agree on every word, and after the
 * other regions region 0's header and checkpoint info must read unchanged;
 * otherwise nothing is applied. Accepting words one by one, each when two
 * reads agreed on it, mixed moments: a copy could hold a checkpointer's new
 * nBackfill beside a header older than the one that checkpointer worked from,
 * and SQLite then read pages from the database file that the checkpoint had
 * deliberately not copied (docs/performance.md, "A reader saw an older snapshot").
 */
import { closeSync, constants as fsc, fstatSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { withAdminLock } from './admin-lock.js';
import { REC } from '../../src/db/lock-records/portable-lock-files.js';
import { LockRecord, sameFileProblem, type Refusal } from './lock-table.js';
import { count } from './vfs-stats.js';
import { sleepSync } from '../../src/db/contract/sleep-sync.js';
import { DIFF_BLOCK_BYTES, type WordDiff } from './word-diff.js';

/** The wasm heap access the index needs. */
export interface WasmHeap {
  /** Current byte view of wasm memory (it is replaced when memory grows). */
  heap8u(): Uint8Array;
  /** Current 32-bit view of wasm memory. */
  heap32(): Int32Array;
  /** Allocates wasm memory (sqlite3_malloc). */
  alloc(n: number): number;
  /** Frees wasm memory. */
  dealloc(p: number): void;
  /** Finds the words where two areas of wasm memory differ (word-diff.ts). */
  diff: WordDiff;
}

/** Step between looks at owners the dead-man switch cannot date yet (they renew every second if alive). */
const DMS_WATCH_STEP_MS = 100;
const REGION = 32768;
const WORDS = REGION / 4;
/** Word offsets in region 0. */
const W_MXFRAME = 4; // copy 0 of the header: mxFrame at byte 16
const W_NBACKFILL = 24; // WalCkptInfo.nBackfill at byte 96
const W_ALOCK = 30; // bytes 120..127: SQLite's unused aLock[] placeholder, never synced
const W_HEADER_END = 34; // 136 bytes of header + checkpoint info
const W_HEADER_COPY = 12; // one copy of WalIndexHdr: 48 bytes
const LOCK_WRITE = 0;
const LOCK_CKPT = 1;
const LOCK_RECOVER = 2;
const READ_LOCK_0 = 3;
/**
 * A lock-table read at most this old that shows a live holder refuses a
 * checkpoint (CKPT) or read-mark (READ_LOCK(1..)) try at once: SQLite takes
 * those only to try, and goes on without them when refused, so the handshake
 * (2 pwrite + 1 pread) would only confirm what was just seen.
 */
const SEEN_FRESH_MS = 1;
/** Pushes merge runs of changed hash-table words closer than this many words. */
const HASH_MERGE_GAP = 32;
const SCOPE_NONE = 0;
const SCOPE_HEADER = 1;
const SCOPE_FULL = 2;
const READ_TWICE_ATTEMPTS = 64;
/** Whole-snapshot attempts of one pull before it answers "still moving". */
const PULL_ATTEMPTS = 4;
/** Region 0's header copies + checkpoint info, re-read after the other regions. */
const HEAD_BYTES = W_HEADER_END * 4;
/** Words per block the wasm comparison takes at once (it compares whole blocks). */
const DIFF_BLOCK_WORDS = DIFF_BLOCK_BYTES / 4;
/** Ranges up to this many words are compared by a plain loop, longer ones in wasm. */
const SHORT_RANGE_WORDS = 64;

const SHM_UNLOCK = 1;
const SHM_SHARED = 4;
const SHM_EXCLUSIVE = 8;

/** One region's three copies, all in wasm memory so that word-diff.ts compares them in one call. */
interface Region {
  /** Wasm address of SQLite's private copy. */
  readonly ptr: number;
  /** Wasm address of the words as last exchanged with the file. */
  readonly shadow: number;
  /** Wasm address where a pull keeps this region's agreed read until the whole snapshot is had. */
  readonly collected: number;
}

/** The record bytes a shared take of slot i conflicts with, per slot: made once, not per lock. */
const SHARED_CONFLICTS: readonly (readonly number[])[] = Array.from({ length: 8 }, (_, i) => [REC.shmExclusive + i]);
/** The same for exclusive takes of slots [ofst, ofst+n), by ofst * 9 + n, made on first use. */
const EXCLUSIVE_CONFLICTS: (readonly number[] | undefined)[] = [];

/** The record bytes an exclusive take of slots [ofst, ofst+n) conflicts with: every shared and exclusive byte of them. */
function exclusiveConflicts(ofst: number, n: number): readonly number[] {
  const key = ofst * 9 + n;
  const known = EXCLUSIVE_CONFLICTS[key];
  if (known !== undefined) return known;
  const conflicts: number[] = [];
  for (let j = ofst; j < ofst + n; j++) conflicts.push(REC.shmShared + j, REC.shmExclusive + j);
  EXCLUSIVE_CONFLICTS[key] = conflicts;
  return conflicts;
}

/** The `-shm` path of a database. */
export function shmPath(dbPath: string): string {
  return `${dbPath}-shm`;
}

/** Sets the never-synchronised aLock[] placeholder (bytes 120..127) of a read to the shadow's. */
function maskAlock(read: Buffer, shadow: Buffer): void {
  shadow.copy(read, W_ALOCK * 4, W_ALOCK * 4, (W_ALOCK + 2) * 4);
}

/** True when a fresh read of region 0's first HEAD_BYTES matches `region0` (aLock[] placeholder ignored). */
function sameHead(head: Buffer, region0: Buffer): boolean {
  return (
    head.compare(region0, 0, W_ALOCK * 4, 0, W_ALOCK * 4) === 0 &&
    head.compare(region0, (W_ALOCK + 2) * 4, HEAD_BYTES, (W_ALOCK + 2) * 4, HEAD_BYTES) === 0
  );
}

/** One connection's view of the WAL index of one database. */
export class ShmIndex {
  readonly #heap: WasmHeap;
  readonly #record: LockRecord;
  readonly #path: string;
  #fd: number;
  readonly #regions: Region[] = [];
  /** Which area SQLite may have written and not yet pushed (SCOPE_*). */
  #dirty = SCOPE_NONE;
  /** True while this connection holds the database EXCLUSIVE lock. */
  #dbExclusive = false;
  /** Other records' identities and push stamps as of the last pull. */
  readonly #seen = LockRecord.newSeenStamps();
  readonly #tmp = new Int32Array(WORDS);
  readonly #tmpBytes = new Uint8Array(this.#tmp.buffer);
  readonly #tmpBuf = Buffer.from(this.#tmp.buffer);
  readonly #tmp2 = new Int32Array(WORDS);
  readonly #tmp2Buf = Buffer.from(this.#tmp2.buffer);
  readonly #headBytes = Buffer.alloc(HEAD_BYTES);
  readonly #changed = new Int32Array(WORDS);
  /** Wasm address of the word list a wasm comparison writes (WORDS words), allocated with the first region. */
  #diffOut = 0;
  /** A Buffer over wasm memory, remade when memory grows (the old ArrayBuffer is then detached). */
  #heapBuf: Buffer | undefined;
  /** The view of wasm memory #heapBuf was made from. */
  #heapBufOf: Uint8Array | undefined;
  /** Removes this index's check that `-shm` is still the file it has open. */
  #dropFileCheck: () => void = () => {};

  #heapBuffer(heap8: Uint8Array): Buffer {
    // The runtime hands out the same view until memory grows; comparing views is cheaper than reading `.buffer`.
    if (this.#heapBuf !== undefined && this.#heapBufOf === heap8) return this.#heapBuf;
    const fresh = Buffer.from(heap8.buffer, heap8.byteOffset, heap8.byteLength);
    this.#heapBuf = fresh;
    this.#heapBufOf = heap8;
    return fresh;
  }

  /** A Buffer over REGION bytes of wasm memory at `ptr` (valid until memory grows). */
  #view(ptr: number): Buffer {
    return this.#heapBuffer(this.#heap.heap8u()).subarray(ptr, ptr + REGION);
  }

  /** Allocates REGION bytes of wasm memory. */
  #allocRegion(): number {
    const p = this.#heap.alloc(REGION);
    if (!p) throw new Error('out of wasm memory for the WAL index');
    return p;
  }

  /** Frees every region's wasm memory. */
  #freeRegions(): void {
    for (const r of this.#regions) {
      this.#heap.dealloc(r.ptr);
      this.#heap.dealloc(r.shadow);
      this.#heap.dealloc(r.collected);
    }
    this.#regions.length = 0;
    if (this.#diffOut !== 0) this.#heap.dealloc(this.#diffOut);
    this.#diffOut = 0;
  }

  /**
   * The words in [from, to) of region `region` where SQLite's copy differs
   * from the shadow, into #changed; returns how many. Long ranges are
   * compared in wasm over whole blocks, then clipped to the range.
   */
  #changedWords(region: Region, from: number, to: number): number {
    const changed = this.#changed;
    let count = 0;
    const heap = this.#heap.heap32();
    const base = region.ptr >> 2;
    const shadow = region.shadow >> 2;
    if (to - from <= SHORT_RANGE_WORDS) {
      for (let w = from; w < to; w++) if (heap[base + w] !== heap[shadow + w]) changed[count++] = w;
      return count;
    }
    const start = from - (from % DIFF_BLOCK_WORDS);
    const end = Math.min(WORDS, Math.ceil(to / DIFF_BLOCK_WORDS) * DIFF_BLOCK_WORDS);
    const k = this.#heap.diff(region.ptr + start * 4, region.shadow + start * 4, (end - start) * 4, this.#diffOut);
    const found = this.#heap.heap32();
    const out = this.#diffOut >> 2;
    for (let j = 0; j < k; j++) {
      const w = start + (found[out + j] as number);
      if (w >= from && w < to) changed[count++] = w;
    }
    return count;
  }

  /**
   * Opens `<db>-shm` and applies the dead-man switch: under the admin lock,
   * when no other connection anywhere has the index open, the file is emptied
   * so SQLite rebuilds the index from the WAL instead of trusting what a
   * crashed process (or a previous boot) left. "No other" must be certain: a
   * live owner may be half-way through a push. Owners of another realm count
   * while their lease runs; an expired one is revoked first (it fences itself
   * if it wakes up). One whose lease cannot be dated yet (a previous boot, a
   * time namespace: clocks not comparable) is watched, outside the admin
   * lock, until it renews (it lives: keep the index) or its lease expires.
   */
  constructor(heap: WasmHeap, record: LockRecord) {
    this.#heap = heap;
    this.#record = record;
    this.#path = shmPath(record.dbPath);
    this.#fd = openSync(this.#path, fsc.O_RDWR | fsc.O_CREAT, 0o600);
    try {
      for (;;) {
        const decided = withAdminLock(record.dbPath, record.owner, () => {
          const users = record.indexUsers();
          if (users === 'undecided') return false;
          if (users === 'none') ftruncateSync(this.#fd, 0);
          record.write(REC.shmOpen, 1, 1);
          return true;
        });
        if (decided) break;
        count('shm.dms.watch');
        sleepSync(DMS_WATCH_STEP_MS);
      }
    } catch (error) {
      closeSync(this.#fd);
      throw error;
    }
    this.#dropFileCheck = record.addFileCheck(() => (this.#fd < 0 ? undefined : sameFileProblem(this.#fd, this.#path)));
  }

  /** xShmMap: the address of region `i`, mapping it on first use; 0 when it does not exist and may not be created. */
  map(i: number, size: number, extend: boolean): number {
    if (size !== REGION) throw new Error(`unexpected WAL-index region size ${size}`);
    while (this.#regions.length <= i) {
      const k = this.#regions.length;
      const need = (k + 1) * REGION;
      if (fstatSync(this.#fd).size < need) {
        if (!extend) return 0;
        // Only the WAL_WRITE_LOCK holder extends, so this never shrinks a file someone else grew.
        ftruncateSync(this.#fd, need);
      }
      if (this.#diffOut === 0) this.#diffOut = this.#allocRegion();
      const region = { ptr: this.#allocRegion(), shadow: this.#allocRegion(), collected: this.#allocRegion() };
      const got = readSync(this.#fd, this.#tmpBytes, 0, REGION, k * REGION);
      if (got < REGION) this.#tmpBytes.fill(0, got);
      if (k === 0) this.#tmp[W_ALOCK] = this.#tmp[W_ALOCK + 1] = 0;
      const heap8 = this.#heap.heap8u();
      heap8.set(this.#tmpBytes, region.ptr);
      heap8.set(this.#tmpBytes, region.shadow);
      this.#regions.push(region);
    }
    return (this.#regions[i] as Region).ptr;
  }

  /** xShmLock: takes or releases WAL-index lock slots [ofst, ofst+n); undefined when done, else why not (SQLITE_BUSY). */
  lock(ofst: number, n: number, flags: number): Refusal | undefined {
    const rec = this.#record;
    if (flags & SHM_UNLOCK) {
      // Releases go out with the next write of the record or when the file layer settles (clearLater):
      // per commit, a read-mark release with the shared take after it, and the write lock's release with the read lock's.
      if (flags & SHM_EXCLUSIVE) {
        this.push();
        rec.clearLater(REC.shmExclusive + ofst, n);
        this.#dirty = this.#heldScope();
      } else {
        rec.clearLater(REC.shmShared + ofst, n);
      }
      return undefined;
    }
    if (flags & SHM_SHARED) {
      const conflicts = SHARED_CONFLICTS[ofst] as readonly number[];
      if (!rec.tryTake(REC.shmShared + ofst, n, conflicts)) {
        count(`busy.shared.${ofst}`);
        this.pull(false, true);
        return rec.refused(conflicts);
      }
      if (!this.pull(false, true)) {
        count('busy.unsettled');
        rec.write(REC.shmShared + ofst, n, 0);
        return rec.refused(undefined);
      }
      if (ofst === READ_LOCK_0 && !this.#fullyBackfilled()) {
        count('busy.trap3');
        // Trap 3: SQLite chose READ_LOCK(0) from an unlocked read; fresh data says the WAL is needed.
        rec.write(REC.shmShared + ofst, n, 0);
        return rec.refused(undefined);
      }
      return undefined;
    }
    const conflicts = exclusiveConflicts(ofst, n);
    if (n === 1 && (ofst === LOCK_CKPT || ofst > READ_LOCK_0) && rec.seenHeldByLive(conflicts, SEEN_FRESH_MS)) {
      // A checkpoint or read-mark try that a lock-table read of a moment ago already refuses: no handshake.
      count(`busy.seen.${ofst}`);
      this.pull(false, true);
      return rec.refused(conflicts);
    }
    if (!rec.tryTake(REC.shmExclusive + ofst, n, conflicts)) {
      count(`busy.excl.${ofst}.${n}`);
      this.pull(false, true);
      return rec.refused(conflicts);
    }
    if (!this.pull(false, true)) {
      count('busy.unsettled');
      this.push();
      rec.write(REC.shmExclusive + ofst, n, 0);
      return rec.refused(undefined);
    }
    this.#dirty = this.#heldScope();
    return undefined;
  }

  /**
   * What SQLite may write given the locks held: hash tables only under
   * WAL_WRITE_LOCK (or RECOVER, or the database EXCLUSIVE lock); under CKPT
   * or a READ_LOCK(i) only the checkpoint info (nBackfill, aReadMark[i]).
   */
  #heldScope(): number {
    const rec = this.#record;
    if (this.#dbExclusive || rec.holds(REC.shmExclusive + LOCK_WRITE) || rec.holds(REC.shmExclusive + LOCK_RECOVER)) return SCOPE_FULL;
    return rec.holdsAny(REC.shmExclusive, 8) ? SCOPE_HEADER : SCOPE_NONE;
  }

  #fullyBackfilled(): boolean {
    const r0 = this.#regions[0];
    if (r0 === undefined) return true;
    const heap = this.#heap.heap32();
    const base = r0.ptr >> 2;
    return heap[base + W_NBACKFILL] === heap[base + W_MXFRAME];
  }

  /** True while this connection holds any WAL-index slot, shared or exclusive. */
  holdsSlot(): boolean {
    // The shared bytes and the exclusive bytes right after them: one span.
    return this.#record.holdsAny(REC.shmShared, REC.shmExclusive + 8 - REC.shmShared);
  }

  /** Brings the private copy up to date with the file (pushing own changes first); nothing once fenced. */
  refresh(): void {
    if (this.#record.fenced !== undefined) return;
    this.pull(false);
  }

  /** Database lock reached EXCLUSIVE: SQLite may now use the index without shm locks (trap 2). */
  onDatabaseExclusive(): void {
    this.#dbExclusive = true;
    this.pull(true);
    this.#dirty = SCOPE_FULL;
  }

  /** Database EXCLUSIVE is about to be released: publish what SQLite changed under it. */
  beforeDatabaseExclusiveRelease(): void {
    this.push();
    this.#dbExclusive = false;
    this.#dirty = this.#heldScope();
  }

  /**
   * Copies what someone else changed in the file into the private copy.
   * `tableFresh` says the lock table was read just now (every lock attempt
   * reads it); its push stamps tell whether anyone pushed since our last pull.
   *
   * The copy must be a snapshot of ONE moment, not a per-word mix: SQLite
   * orders its shared-memory stores (hash tables, then header; header, then
   * nBackfill) and relies on a reader that sees a new nBackfill also seeing
   * the header the checkpointer worked from. Each region is therefore taken
   * only from two consecutive reads that agree on every word (a double
   * collect), and after the other regions region 0's header and checkpoint
   * info are read again and must be unchanged (no commit, checkpoint or WAL
   * restart happened while the hash tables were read). Returns false when the
   * file kept changing; the private copy is then left as it was.
   */
  pull(force: boolean, tableFresh = false): boolean {
    if (this.#regions.length === 0) return true;
    if (this.#dirty !== SCOPE_NONE) this.push();
    if (!tableFresh) this.#record.readTable();
    const pushed = this.#record.othersPushedSince(this.#seen);
    if (!force && !pushed) return true;
    count('pull.full');
    for (let attempt = 0; attempt < PULL_ATTEMPTS; attempt++) {
      if (this.#pullOnce()) return true;
      count('pull.retry');
    }
    // Still moving: the next pull must read again, so forget the stamps.
    LockRecord.forgetSeenStamps(this.#seen);
    return false;
  }

  #readRegion(i: number, into: Uint8Array): void {
    const got = readSync(this.#fd, into, 0, REGION, i * REGION);
    if (got < REGION) into.fill(0, got);
  }

  /**
   * One snapshot of every region: region 0 first (header), then the others
   * (hash tables at least as new as the header), then region 0's first
   * 136 bytes again. Applies nothing and returns false when no stable
   * snapshot was had.
   */
  #pullOnce(): boolean {
    const n = this.#regions.length;
    // Collect first, apply after: a failed attempt leaves the private copy untouched.
    // Which regions' agreed reads wait in their `collected` copy.
    const snaps: boolean[] = [];
    for (let i = 0; i < n; i++) {
      const snap = this.#collectRegion(i);
      if (snap === null) return false;
      if (snap !== undefined) this.#heap.heap8u().set(snap, (this.#regions[i] as Region).collected);
      snaps.push(snap !== undefined);
    }
    if (n > 1) {
      // Re-read region 0's header + checkpoint info: it must be what the snapshot holds.
      const head = this.#headBytes;
      const got = readSync(this.#fd, head, 0, HEAD_BYTES, 0);
      if (got < HEAD_BYTES) head.fill(0, got);
      const r0 = this.#regions[0] as Region;
      if (!sameHead(head, this.#view(snaps[0] === true ? r0.collected : r0.shadow))) return false;
    }
    for (let i = 0; i < n; i++) if (snaps[i] === true) this.#applyRegion(i);
    return true;
  }

  /**
   * Double collect of region i: undefined when the first read equals the
   * shadow (nothing changed: the copy is already that moment's state), the
   * agreed bytes when two consecutive reads are identical, null when the
   * region kept changing. The returned buffer is reused: copy it.
   */
  #collectRegion(i: number): Buffer | undefined | null {
    const region = this.#regions[i] as Region;
    let cur = this.#tmpBuf;
    let next = this.#tmp2Buf;
    this.#readRegion(i, cur);
    if (i === 0) maskAlock(cur, this.#view(region.shadow));
    if (cur.equals(this.#view(region.shadow))) return undefined;
    for (let attempt = 0; attempt < READ_TWICE_ATTEMPTS; attempt++) {
      this.#readRegion(i, next);
      if (i === 0) maskAlock(next, this.#view(region.shadow));
      if (next.equals(cur)) return cur;
      const t = cur;
      cur = next;
      next = t;
    }
    return null;
  }

  /** Copies the words of region i's collected snapshot that differ from the shadow into the private copy and the shadow. */
  #applyRegion(i: number): void {
    const region = this.#regions[i] as Region;
    const k = this.#heap.diff(region.collected, region.shadow, REGION, this.#diffOut);
    const heap = this.#heap.heap32();
    const out = this.#diffOut >> 2;
    const snap = region.collected >> 2;
    const shadow = region.shadow >> 2;
    const base = region.ptr >> 2;
    for (let j = 0; j < k; j++) {
      const w = heap[out + j] as number;
      const v = heap[snap + w] as number;
      heap[shadow + w] = v;
      heap[base + w] = v;
    }
  }

  /**
   * Writes the words SQLite changed here to the file: hash tables first, then
   * the checkpoint info, the two header copies last (with the write lock in
   * one pwrite, else copy 1 before copy 0, SQLite's own store order). Only
   * the area the held locks allow SQLite to write is compared.
   */
  push(): void {
    const fenced = this.#record.fenced;
    if (fenced !== undefined) throw new Error(fenced);
    const scope = this.#dirty;
    if (this.#regions.length === 0 || scope === SCOPE_NONE) return;
    let wrote = false;
    if (scope === SCOPE_FULL) {
      for (let i = 0; i < this.#regions.length; i++) {
        // Gap words inside a run are safe to rewrite: hash tables change only under WAL_WRITE_LOCK, held here.
        wrote = this.#pushRange(i, i === 0 ? W_HEADER_END : 0, WORDS, HASH_MERGE_GAP) || wrote;
      }
    }
    wrote = this.#pushRange(0, W_NBACKFILL, W_ALOCK, 0) || wrote;
    wrote = this.#pushRange(0, W_ALOCK + 2, W_HEADER_END, 0) || wrote;
    if (scope === SCOPE_FULL) {
      // A header copy (12 words) changes only under WAL_WRITE_LOCK (or RECOVER, or database
      // EXCLUSIVE), held here: nobody else writes either copy, so both go out in one pwrite,
      // unchanged words included. Its bytes land copy 0 first, against SQLite's own order, which
      // only matters to a reader between the two: it sees copies that differ (as it could between
      // two pwrites), retries, and cannot run recovery while this connection holds the write lock
      // it releases after the push. Everything a matching pair describes went out before.
      wrote = this.#pushRange(0, 0, 2 * W_HEADER_COPY, W_HEADER_COPY) || wrote;
    } else {
      // Without the write lock, only changed words, one by one, copy 1 first.
      wrote = this.#pushRange(0, W_HEADER_COPY, 2 * W_HEADER_COPY, 0) || wrote;
      wrote = this.#pushRange(0, 0, W_HEADER_COPY, 0) || wrote;
    }
    if (wrote) {
      count('push');
      this.#record.bumpStamp();
    }
  }

  /** Pushes changed words of [from, to) (from even) of region i, merging runs closer than `gap` words. */
  #pushRange(i: number, from: number, to: number, gap: number): boolean {
    const region = this.#regions[i] as Region;
    const count = this.#changedWords(region, from, to);
    if (count === 0) return false;
    const changed = this.#changed;
    const heap8 = this.#heap.heap8u();
    const heap = this.#heap.heap32();
    const base = region.ptr >> 2;
    const shadow = region.shadow >> 2;
    let k = 0;
    while (k < count) {
      const start = changed[k] as number;
      let end = start + 1;
      k++;
      while (k < count && (changed[k] as number) - end <= gap) {
        end = (changed[k] as number) + 1;
        k++;
      }
      writeSync(this.#fd, heap8, region.ptr + start * 4, (end - start) * 4, i * REGION + start * 4);
      heap.copyWithin(shadow + start, base + start, base + end);
    }
    return true;
  }

  /** Frees the private copy and closes the file without writing anything (a fenced connection closing). */
  forget(): void {
    if (this.#fd < 0) return;
    this.#dropFileCheck();
    this.#freeRegions();
    closeSync(this.#fd);
    this.#fd = -1;
  }

  /** xShmUnmap: frees the private copy; deletes the file when asked and nobody else has it open. */
  unmap(deleteFlag: boolean): void {
    if (this.#fd < 0) return;
    // SQLite unmaps while it still holds the database EXCLUSIVE lock of a close-time checkpoint,
    // before beforeDatabaseExclusiveRelease could publish it: publish it here.
    if (this.#record.fenced === undefined) this.push();
    this.#dropFileCheck();
    this.#freeRegions();
    const record = this.#record;
    try {
      withAdminLock(record.dbPath, record.owner, () => {
        record.write(REC.shmOpen, 1, 0);
        if (deleteFlag && !record.othersHoldAny([REC.shmOpen], 'keep')) {
          try {
            unlinkSync(this.#path);
          } catch {
            // Already gone.
          }
        }
      });
    } finally {
      closeSync(this.#fd);
      this.#fd = -1;
    }
  }
}
