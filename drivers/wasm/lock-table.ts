/**
 * The lock table: one small file `<db>-locks` that holds one 64-byte record
 * per open connection (any process). A record names its owner and carries one
 * byte per lock it holds: the database lock levels and the eight WAL-index
 * slots, shared and exclusive.
 *
 * Node has no flock/fcntl, but pwrite and pread on one file are coherent
 * between processes on one host. Taking a lock is Dekker's handshake: set my
 * own byte (pwrite), then read the whole table (pread) and back off if a live
 * owner holds a conflicting byte. Two conflicting takers both write before
 * they read, so at least one sees the other; both may back off, never both
 * win. Each flag lives in its own byte, so a read racing a write sees the
 * byte either before or after, never half of it. Releasing is one pwrite.
 * Nobody ever writes another owner's record except under the admin lock when
 * the owner is dead, so a live owner's locks are never taken from it; a dead
 * owner's bytes are simply ignored, so a killed process never leaves the
 * database locked.
 */
import { closeSync, constants as fsc, fstatSync, openSync, readSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { adminMarkerDir, lockTablePath, readRecordOwner, REC, RECORD_SIZE, type LockOwner } from '../../src/db/portable-lock-files.js';
import { withAdminLock } from './admin-lock.js';
import { isOwnerAlive } from './owner-liveness.js';

/** At most this many records: the table is read whole on every lock. */
const MAX_RECORDS = 1024;

/**
 * A lock that was not granted (SQLite is answered SQLITE_BUSY), returned to
 * the file layer, which hands it to the busy wait: the record that asked and
 * the byte offsets another live owner held, so the wait can end as soon as
 * they are free. `conflicts` is undefined when the wait is for something
 * else (a WAL index that kept changing): the wait then only sleeps a little.
 */
export interface Refusal {
  /** The record whose lock was refused. */
  readonly record: LockRecord;
  /** Record byte offsets that conflicted, or undefined when no owner's bytes did. */
  readonly conflicts: readonly number[] | undefined;
}

/** u32 words per record compared to detect WAL-index pushes: identity (0..15) and the stamp. */
const STAMP_WORDS = [0, 1, 2, 3, REC.shmStamp / 4] as const;

/**
 * One connection's record in the lock table, and the operations on it.
 * Only this object writes its record (after it was claimed), so it keeps the
 * authoritative copy in memory and writes just the bytes that change.
 */
export class LockRecord {
  /** The database this record locks. */
  readonly dbPath: string;
  /** Who this record says holds its locks. */
  readonly owner: LockOwner;
  /** The record's index in the table. */
  readonly index: number;
  #fd: number;
  readonly #mine = Buffer.alloc(RECORD_SIZE);
  readonly #table = Buffer.alloc(RECORD_SIZE * MAX_RECORDS);
  #tableLength = 0;
  #stamp = 0;

  private constructor(dbPath: string, owner: LockOwner, fd: number, index: number) {
    this.dbPath = dbPath;
    this.owner = owner;
    this.#fd = fd;
    this.index = index;
  }

  /** Claims a free (or dead owner's) record for `owner`, under the admin lock. */
  static claim(dbPath: string, owner: LockOwner): LockRecord {
    const path = lockTablePath(dbPath);
    const { fd, index } = withAdminLock(dbPath, owner, () => {
      // Opened under the admin lock: the last closer deletes the table under it too.
      const rw = openSync(path, fsc.O_RDWR | fsc.O_CREAT, 0o600);
      try {
        const size = fstatSync(rw).size;
        const count = Math.min(MAX_RECORDS, Math.floor(size / RECORD_SIZE));
        const buf = Buffer.alloc(count * RECORD_SIZE);
        if (count > 0) readSync(rw, buf, 0, buf.length, 0);
        let chosen = -1;
        for (let i = 0; i < count; i++) {
          const base = i * RECORD_SIZE;
          const pid = buf.readUInt32LE(base + REC.pid);
          if (pid === 0 || !isOwnerAlive(readRecordOwner(buf, base))) {
            chosen = i;
            break;
          }
        }
        if (chosen < 0) {
          if (count >= MAX_RECORDS) throw new Error(`lock table ${path} is full (${MAX_RECORDS} live connections)`);
          chosen = count;
        }
        const rec = Buffer.alloc(RECORD_SIZE);
        rec.writeUInt32LE(owner.pid, REC.pid);
        rec.writeUInt32LE(owner.connection, REC.connection);
        rec.writeDoubleLE(owner.startTime, REC.startTime);
        writeSync(rw, rec, 0, RECORD_SIZE, chosen * RECORD_SIZE);
        return { fd: rw, index: chosen };
      } catch (error) {
        closeSync(rw);
        throw error;
      }
    });
    const record = new LockRecord(dbPath, owner, fd, index);
    record.#mine.writeUInt32LE(owner.pid, REC.pid);
    record.#mine.writeUInt32LE(owner.connection, REC.connection);
    record.#mine.writeDoubleLE(owner.startTime, REC.startTime);
    return record;
  }

  /** True when this record holds the byte at `offset`. */
  holds(offset: number): boolean {
    return this.#mine[offset] !== 0;
  }

  /** Sets or clears bytes [from, from+count) of this record and writes them. */
  write(from: number, count: number, value: 0 | 1): void {
    this.#mine.fill(value, from, from + count);
    writeSync(this.#fd, this.#mine, from, count, this.index * RECORD_SIZE + from);
  }

  /**
   * Dekker's handshake: sets bytes [from, from+count), reads the table, and
   * keeps them only when no live other record has any byte of `conflicts`
   * (offsets) set. Returns true when taken.
   */
  tryTake(from: number, count: number, conflicts: readonly number[]): boolean {
    this.write(from, count, 1);
    if (!this.othersHoldAny(conflicts)) return true;
    this.write(from, count, 0);
    return false;
  }

  /** The Refusal of a lock of this record that `conflicts` (offsets, or undefined) kept from being granted. */
  refused(conflicts: readonly number[] | undefined): Refusal {
    return { record: this, conflicts };
  }

  /** Reads the table and reports whether a live other record holds any of `offsets`. */
  othersHoldAny(offsets: readonly number[]): boolean {
    this.#refresh();
    const table = this.#table;
    const end = this.#tableLength;
    for (let base = 0; base < end; base += RECORD_SIZE) {
      if (base === this.index * RECORD_SIZE) continue;
      let hit = false;
      for (let k = 0; k < offsets.length; k++) {
        if (table[base + (offsets[k] as number)] !== 0) {
          hit = true;
          break;
        }
      }
      if (!hit) continue;
      if (table.readUInt32LE(base + REC.pid) === 0) continue;
      if (isOwnerAlive(readRecordOwner(table, base))) return true;
    }
    return false;
  }

  /** Re-reads the whole table (one pread). */
  readTable(): void {
    this.#refresh();
  }

  /**
   * Compares, in the table as last read, every other record's identity and
   * WAL-index stamp with `seen` (updated in place). True when any record was
   * added, reused or pushed since: then the WAL index must be pulled.
   * `seen` holds 5 words per record plus, at the end, the record count.
   */
  othersPushedSince(seen: Int32Array): boolean {
    const table = this.#table;
    const count = this.#tableLength / RECORD_SIZE;
    const countSlot = seen.length - 1;
    let changed = seen[countSlot] !== count;
    seen[countSlot] = count;
    const mine = this.index;
    for (let r = 0; r < count; r++) {
      if (r === mine) continue;
      const base = r * RECORD_SIZE;
      for (let k = 0; k < STAMP_WORDS.length; k++) {
        const v = table.readInt32LE(base + (STAMP_WORDS[k] as number) * 4);
        const at = r * STAMP_WORDS.length + k;
        if (seen[at] !== v) {
          seen[at] = v;
          changed = true;
        }
      }
    }
    return changed;
  }

  /** A fresh `seen` array for othersPushedSince (everything counts as changed once). */
  static newSeenStamps(): Int32Array {
    const seen = new Int32Array(MAX_RECORDS * STAMP_WORDS.length + 1);
    seen.fill(-1);
    return seen;
  }

  /** Makes the next othersPushedSince report a change. */
  static forgetSeenStamps(seen: Int32Array): void {
    seen[seen.length - 1] = -1;
  }

  /** Announces a push to the WAL index by bumping this record's stamp. */
  bumpStamp(): void {
    this.#stamp = (this.#stamp + 1) | 0;
    this.#mine.writeInt32LE(this.#stamp, REC.shmStamp);
    writeSync(this.#fd, this.#mine, REC.shmStamp, 4, this.index * RECORD_SIZE + REC.shmStamp);
  }

  #refresh(): void {
    const n = readSync(this.#fd, this.#table, 0, this.#table.length, 0);
    this.#tableLength = n - (n % RECORD_SIZE);
  }

  /**
   * Clears every lock byte and gives the record back, under the admin lock.
   * The last live connection removes the table and the admin folder, so a
   * closed database leaves only SQLite's own files behind.
   */
  release(): void {
    if (this.#fd < 0) return;
    try {
      // Own lock bytes may always be cleared; only the identity needs the admin lock.
      this.write(REC.dbShared, RECORD_SIZE - REC.dbShared, 0);
      withAdminLock(this.dbPath, this.owner, () => {
        writeSync(this.#fd, Buffer.alloc(RECORD_SIZE), 0, RECORD_SIZE, this.index * RECORD_SIZE);
        this.#refresh();
        let othersAlive = false;
        for (let base = 0; base < this.#tableLength; base += RECORD_SIZE) {
          if (this.#table.readUInt32LE(base + REC.pid) !== 0 && isOwnerAlive(readRecordOwner(this.#table, base))) {
            othersAlive = true;
            break;
          }
        }
        if (!othersAlive) {
          try {
            unlinkSync(lockTablePath(this.dbPath));
          } catch {
            // Already gone.
          }
        }
      });
    } finally {
      closeSync(this.#fd);
      this.#fd = -1;
    }
    try {
      rmdirSync(adminMarkerDir(this.dbPath));
    } catch {
      // Another process is using it, or it is gone.
    }
  }
}
