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
 *
 * A record also names its owner's realm and carries its lease (bytes 37 and
 * 44..63, portable-lock-files.ts). An owner of this realm is judged by pid;
 * one of another realm (a container, a sandbox) by its lease, which its
 * process renews every second. A dead owner's bytes are simply ignored, so a
 * killed process never leaves the database locked; an owner whose lease
 * expired is first revoked (see revokeLease), then ignored, and only when a
 * lock it holds is needed. Nobody writes another owner's record except to
 * revoke its lease, or under the admin lock when it is gone (dead or
 * revoked), so a live owner's locks are never taken from it.
 */
import { closeSync, constants as fsc, fstatSync, openSync, readFileSync, readSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { DbError } from '../../src/db/contract/db-error.js';
import { judgeLockOwner, type OwnerVerdict } from '../../src/db/lock-records/lock-owner-verdict.js';
import { currentStampMs, LeaseWatch, leaseReadableAtOnce } from '../../src/db/lock-records/owner-lease.js';
import {
  adminMarkerDir,
  formatOwner,
  isRevoked,
  LOCK_BYTES,
  lockTablePath,
  readRecordHead,
  REC,
  RECORD_SIZE,
  revokeLease,
  writeRecordHead,
  type LockOwner,
  type RecordHead,
} from '../../src/db/lock-records/portable-lock-files.js';
import { clockIsBoots } from '../../src/db/processes/process-identity.js';
import { withAdminLock } from './admin-lock.js';
import { ALIVE_CACHE_MS, isThisProcess, liveness, type KeptLease } from './owner-liveness.js';
import { count } from './vfs-stats.js';

/** At most this many records: the table is read whole on every lock. */
const MAX_RECORDS = 1024;

/** The records of this process with a release held back (LockRecord.clearLater). */
const unsettled = new Set<LockRecord>();

/**
 * Writes every release held back by LockRecord.clearLater in this process.
 * The file layer calls it at the end of every statement and before every
 * sleep, so a release is never held past the SQLite call that made it nor
 * across a wait. A failed write is kept for the next settle; returns the
 * first failure, or undefined.
 */
export function settleReleases(): unknown {
  if (unsettled.size === 0) return undefined;
  let failure: unknown;
  for (const record of [...unsettled]) {
    try {
      record.settle();
    } catch (error) {
      failure ??= error;
    }
  }
  return failure;
}

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
  /** What the refused lock was for (decides what an expired lease means while waiting). */
  readonly purpose: Purpose;
}

/**
 * u32 words of a record that decide its owner's verdict: identity (bytes 0..15),
 * flags (36..39), realm and lease (44..63). Not the lock bytes (16..35) nor the push stamp (40..43).
 */
const JUDGED_WORDS = [0, 1, 2, 3, 9, 11, 12, 13, 14, 15] as const;

/** u32 words per record compared to detect WAL-index pushes: identity (0..15) and the stamp. */
const STAMP_WORDS = [0, 1, 2, 3, REC.shmStamp / 4] as const;

/**
 * Why another record's bytes are being looked at, which decides what an
 * expired lease (another realm's owner, unrenewed for the expiry) means:
 * - `take`: this connection needs a lock the owner holds: the lease is
 *   revoked (see revoke) and, once revoked, its bytes are ignored;
 * - `keep`: tidying (reusing a record, deleting the table or `-shm`, the
 *   WAL-mode EXCLUSIVE of the last closer): only dead and revoked owners are
 *   ignored, so an idle stopped process is not fenced for tidiness.
 */
export type Purpose = 'take' | 'keep';

/** What the dead-man switch learns from the records that have the WAL index open. */
export type IndexUsers = 'live' | 'none' | 'undecided';

/** The judgement of one other record: does it count as holding its bytes? */
function holdsBytes(verdict: OwnerVerdict): boolean {
  return verdict.state !== 'dead';
}

/** True when any of the bytes at `offsets` of the record at `base` is set (a hot loop: no closure, no allocation). */
function anyByteSet(table: Buffer, base: number, offsets: readonly number[]): boolean {
  for (let k = 0; k < offsets.length; k++) {
    if (table[base + (offsets[k] as number)] !== 0) return true;
  }
  return false;
}

/**
 * One connection's record in the lock table, and the operations on it.
 * Only this object writes its record (after it was claimed), so it keeps the
 * authoritative copy in memory and writes just the bytes that change; an
 * observer writes only another record's revokedStamp (revoke()).
 */
export class LockRecord implements KeptLease {
  /** The database this record locks. */
  readonly dbPath: string;
  /** Who this record says holds its locks. */
  readonly owner: LockOwner;
  /** The record's index in the table. */
  readonly index: number;
  #fd: number;
  readonly #mine = Buffer.alloc(RECORD_SIZE);
  readonly #table = Buffer.alloc(RECORD_SIZE * MAX_RECORDS);
  /** The same table as u32 words (Buffer.alloc is never pooled: offset 0, aligned). */
  readonly #tableWords = new Int32Array(this.#table.buffer, this.#table.byteOffset, (RECORD_SIZE * MAX_RECORDS) / 4);
  /** Per other record: its JUDGED_WORDS when last judged alive by pid ... */
  readonly #aliveWords = new Int32Array(MAX_RECORDS * JUDGED_WORDS.length);
  /** ... and until when (performance.now) that judgement stands: one pid-cache lifetime (a death is noticed at most that much later). */
  readonly #aliveUntil = new Float64Array(MAX_RECORDS);
  readonly #one = Buffer.alloc(RECORD_SIZE);
  #tableLength = 0;
  #stamp = 0;
  /** The lease stamp last written into this record. */
  #leaseStamp: number;
  /** The revokedStamp last read back from this record. */
  #revokedSeen: number;
  /** Why this record must not be used any more (its lease was revoked, it was taken over, a file was deleted under it). */
  #fenced: string | undefined;
  /** True when fenced for a deleted file while the record itself is still ours: it is released as usual at close. */
  #ownRecordIntact = false;
  /** This connection's memory of other owners' lease stamps. */
  readonly #watch = new LeaseWatch();
  /** Checks that files beside the database were not deleted under this connection (addFileCheck). */
  readonly #fileChecks: (() => string | undefined)[] = [];
  /** The span of lock bytes whose release is held back (clearLater), from..to; from -1 when none. */
  #laterFrom = -1;
  #laterTo = -1;
  /** When (performance.now) the table was last read into #table by #refresh; -Infinity before. */
  #readAt = Number.NEGATIVE_INFINITY;
  /** The first conflict offsets seenHeldByLive has refused for since that read: each only once per read. */
  readonly #seenAnswered = new Set<number>();

  private constructor(dbPath: string, owner: LockOwner, fd: number, index: number, head: Buffer) {
    this.dbPath = dbPath;
    this.owner = owner;
    this.#fd = fd;
    this.index = index;
    head.copy(this.#mine);
    this.#stamp = this.#mine.readInt32LE(REC.shmStamp);
    this.#leaseStamp = this.#mine.readUInt32LE(REC.leaseStamp);
    this.#revokedSeen = this.#mine.readUInt32LE(REC.revokedStamp);
  }

  /** Claims a free (or dead or revoked owner's) record for `owner`, under the admin lock. */
  static claim(dbPath: string, owner: LockOwner): LockRecord {
    const path = lockTablePath(dbPath);
    const watch = new LeaseWatch();
    const rec = Buffer.alloc(RECORD_SIZE);
    const { fd, index } = withAdminLock(dbPath, owner, () => {
      // Opened under the admin lock: the last closer deletes the table under it too.
      const rw = openSync(path, fsc.O_RDWR | fsc.O_CREAT, 0o600);
      try {
        const size = fstatSync(rw).size;
        const n = Math.min(MAX_RECORDS, Math.floor(size / RECORD_SIZE));
        const buf = Buffer.alloc(n * RECORD_SIZE);
        if (n > 0) readSync(rw, buf, 0, buf.length, 0);
        let chosen = -1;
        for (let i = 0; i < n; i++) {
          const head = readRecordHead(buf, i * RECORD_SIZE);
          // Reuse only what is certainly free: an expired but unrevoked owner may still wake up and write its record.
          if (head.owner.pid === 0 || judgeRecord(head, watch).state === 'dead') {
            chosen = i;
            break;
          }
        }
        if (chosen < 0) {
          if (n >= MAX_RECORDS) throw new Error(`lock table ${path} is full (${MAX_RECORDS} connections not known to be gone)`);
          chosen = n;
        }
        writeRecordHead(rec, 0, owner, { stampMs: currentStampMs(), bootClock: clockIsBoots() });
        // The slot's push stamp goes on from where its last owner left it (see othersPushedSince).
        const lastStamp = chosen < n ? buf.readInt32LE(chosen * RECORD_SIZE + REC.shmStamp) : 0;
        rec.writeInt32LE((lastStamp + 1) | 0, REC.shmStamp);
        writeSync(rw, rec, 0, RECORD_SIZE, chosen * RECORD_SIZE);
        return { fd: rw, index: chosen };
      } catch (error) {
        closeSync(rw);
        throw error;
      }
    });
    const record = new LockRecord(dbPath, owner, fd, index, rec);
    liveness.keep(record);
    return record;
  }

  /**
   * Refuses to open `dbPath` while its lock table holds a record of an older
   * agentbus (no realm, no lease) whose process this one cannot see: it may
   * run in another pid namespace, where it cannot see this version's locks
   * either, or it crashed; neither can be told apart, so nothing is guessed.
   */
  static refuseUnjudgeable(dbPath: string): void {
    let buf: Buffer;
    try {
      buf = readFileSync(lockTablePath(dbPath));
    } catch {
      return;
    }
    const watch = new LeaseWatch();
    for (let base = 0; base + RECORD_SIZE <= buf.length; base += RECORD_SIZE) {
      const head = readRecordHead(buf, base);
      if (head.owner.pid === 0 || head.leased) continue;
      if (judgeRecord(head, watch).state !== 'unknown') continue;
      throw new DbError(
        'lock_owner_unknown',
        `${lockTablePath(dbPath)} holds a lock of pid ${head.owner.pid} written by an older agentbus, which records no pid namespace, and no such process runs in this one: it crashed, or it runs in a container or sandbox where it cannot see this version's locks. Stop every older agentbus process (upgrade them), then, with no agentbus process running anywhere on this directory, delete ${lockTablePath(dbPath)} and ${adminMarkerDir(dbPath)}`,
      );
    }
  }

  /** True when this record holds the byte at `offset`. */
  holds(offset: number): boolean {
    return this.#mine[offset] !== 0;
  }

  /** True when this record holds any byte of [from, from+n): one call where a loop of holds() ran per statement. */
  holdsAny(from: number, n: number): boolean {
    const mine = this.#mine;
    for (let i = from; i < from + n; i++) if (mine[i] !== 0) return true;
    return false;
  }

  /**
   * Sets or clears bytes [from, from+n) of this record and writes them,
   * together with any release still held back (clearLater) in one pwrite.
   */
  write(from: number, n: number, value: 0 | 1): void {
    // A plain loop: Buffer.fill's argument handling cost more than the pwrite's own JavaScript on every lock.
    const mine = this.#mine;
    for (let i = from; i < from + n; i++) mine[i] = value;
    let start = from;
    let end = from + n;
    if (this.#laterFrom >= 0) {
      start = Math.min(start, this.#laterFrom);
      end = Math.max(end, this.#laterTo);
      this.#laterFrom = -1;
      unsettled.delete(this);
    }
    writeSync(this.#fd, mine, start, end - start, this.index * RECORD_SIZE + start);
    count('lock.write');
  }

  /**
   * Clears lock bytes [from, from+count) of this record now and writes the
   * release later: with this record's next write, or at the latest when the
   * file layer settles (settleReleases: at the end of every statement and
   * before every sleep). Holding a release back only makes others wait a
   * little longer, never lets anyone in early, so Dekker's handshake holds; a
   * release that follows a WAL-index push still reaches the table after it.
   * Only lock bytes (LOCK_BYTES) are held back: the bytes between two of them
   * are this record's own, so one pwrite of the span is exact.
   */
  clearLater(from: number, count: number): void {
    const mine = this.#mine;
    for (let i = from; i < from + count; i++) mine[i] = 0;
    if (this.#laterFrom < 0) {
      this.#laterFrom = from;
      this.#laterTo = from + count;
      unsettled.add(this);
      return;
    }
    this.#laterFrom = Math.min(this.#laterFrom, from);
    this.#laterTo = Math.max(this.#laterTo, from + count);
  }

  /** Writes the releases held back by clearLater, if any (none once fenced for a record that may be someone else's). */
  settle(): void {
    const from = this.#laterFrom;
    if (from < 0) return;
    if (this.#fd >= 0 && (this.#fenced === undefined || this.#ownRecordIntact)) {
      writeSync(this.#fd, this.#mine, from, this.#laterTo - from, this.index * RECORD_SIZE + from);
      count('lock.write');
    }
    this.#laterFrom = -1;
    unsettled.delete(this);
  }

  /**
   * Dekker's handshake: sets bytes [from, from+n), reads the table, and
   * keeps them only when no other record that counts (see Purpose) has any
   * byte of `conflicts` (offsets) set. Returns true when taken.
   */
  tryTake(from: number, n: number, conflicts: readonly number[], purpose: Purpose = 'take'): boolean {
    count('lock.take');
    this.write(from, n, 1);
    if (!this.othersHoldAny(conflicts, purpose)) return true;
    this.write(from, n, 0);
    return false;
  }

  /**
   * The Refusal of a lock of this record that `conflicts` (offsets, or
   * undefined) kept from being granted, asked for `purpose`.
   */
  refused(conflicts: readonly number[] | undefined, purpose: Purpose = 'take'): Refusal {
    return { record: this, conflicts, purpose };
  }

  /** Reads the table and reports whether another record that counts for `purpose` holds any of `offsets`. */
  othersHoldAny(offsets: readonly number[], purpose: Purpose = 'take'): boolean {
    this.#refresh();
    const table = this.#table;
    const end = this.#tableLength;
    for (let base = 0; base < end; base += RECORD_SIZE) {
      if (base === this.index * RECORD_SIZE) continue;
      if (!anyByteSet(table, base, offsets)) continue;
      if (table.readUInt32LE(base + REC.pid) === 0) continue;
      if (this.#counts(base, purpose)) return true;
    }
    return false;
  }

  /**
   * True when the table as last read, at most `maxAgeMs` ago, shows another
   * record holding any of `offsets` whose owner is known alive without
   * judging it again (judged alive by pid within ALIVE_CACHE_MS, identity,
   * realm and lease words unchanged since; see #counts). Only ever a reason
   * to refuse a lock without a handshake: an older read, or a holder not
   * known alive this way, answers false, and the caller does the handshake.
   * No syscall.
   */
  seenHeldByLive(offsets: readonly number[], maxAgeMs: number): boolean {
    const now = performance.now();
    if (now - this.#readAt > maxAgeMs) return false;
    // One answer per read and first offset: SQLite retries a refused read-mark try in a loop, and each retry must look again.
    const key = offsets[0] as number;
    if (this.#seenAnswered.has(key)) return false;
    const table = this.#table;
    const end = this.#tableLength;
    for (let base = 0; base < end; base += RECORD_SIZE) {
      if (base === this.index * RECORD_SIZE) continue;
      if (!anyByteSet(table, base, offsets)) continue;
      const r = base / RECORD_SIZE;
      if ((this.#aliveUntil[r] as number) > now && this.#sameJudgedWords(r)) {
        this.#seenAnswered.add(key);
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the other record at `base` (as last read) counts as holding its bytes for `purpose`.
   * An owner judged alive by pid is not judged again while the judgement stands (ALIVE_CACHE_MS,
   * the pid cache's own lifetime) and the record's identity, realm and lease words are unchanged:
   * busy waits and contended locks look at the same few holders thousands of times a second.
   * Only "alive" is remembered, so this can only keep respecting a lock, never ignore one.
   */
  #counts(base: number, purpose: Purpose): boolean {
    const r = base / RECORD_SIZE;
    const now = performance.now();
    if ((this.#aliveUntil[r] as number) > now && this.#sameJudgedWords(r)) return true;
    const head = readRecordHead(this.#table, base);
    const verdict = judgeRecord(head, this.#watch);
    if (verdict.state === 'alive' && verdict.by === 'pid') this.#rememberAlive(r, now);
    if (verdict.state !== 'expired') return holdsBytes(verdict);
    if (purpose === 'keep') return true;
    return !this.#revoke(base, head);
  }

  /** True when record r's JUDGED_WORDS in the table equal those remembered by #rememberAlive. */
  #sameJudgedWords(r: number): boolean {
    const words = this.#tableWords;
    const kept = this.#aliveWords;
    const at = r * (RECORD_SIZE / 4);
    const from = r * JUDGED_WORDS.length;
    for (let k = 0; k < JUDGED_WORDS.length; k++) if (words[at + (JUDGED_WORDS[k] as number)] !== kept[from + k]) return false;
    return true;
  }

  /** Remembers record r's JUDGED_WORDS as judged alive by pid at `now`. */
  #rememberAlive(r: number, now: number): void {
    const words = this.#tableWords;
    const kept = this.#aliveWords;
    const at = r * (RECORD_SIZE / 4);
    const from = r * JUDGED_WORDS.length;
    for (let k = 0; k < JUDGED_WORDS.length; k++) kept[from + k] = words[at + (JUDGED_WORDS[k] as number)] as number;
    this.#aliveUntil[r] = now + ALIVE_CACHE_MS;
  }

  /** Revokes the expired lease of the record at `base` (portable-lock-files.ts, revokeLease); true when revoked. */
  #revoke(base: number, head: RecordHead): boolean {
    if (!revokeLease(this.#fd, base, head, this.#one)) return false;
    this.#one.copy(this.#table, base, 0, RECORD_SIZE);
    count('lease.revoked');
    return true;
  }

  /**
   * For the dead-man switch: whether any other connection has the WAL index
   * open. Expired owners are revoked only when no other owner lives (then the
   * index is rebuilt, and a stopped owner must not wake up to it unawares);
   * while one lives the index is kept and nobody needs revoking.
   * `undecided` while the only candidates are owners whose lease this
   * connection cannot date yet (clocks not comparable, no renewal seen, not
   * yet watched for the expiry): the caller waits and asks again.
   */
  indexUsers(): IndexUsers {
    this.#refresh();
    const table = this.#table;
    let undecided = false;
    const expired: { base: number; head: RecordHead }[] = [];
    for (let base = 0; base < this.#tableLength; base += RECORD_SIZE) {
      if (base === this.index * RECORD_SIZE || table[base + REC.shmOpen] === 0 || table.readUInt32LE(base + REC.pid) === 0) continue;
      const head = readRecordHead(table, base);
      const verdict = judgeRecord(head, this.#watch);
      if (verdict.state === 'dead') continue;
      if (verdict.state === 'expired') {
        expired.push({ base, head });
        continue;
      }
      if (verdict.state === 'alive' && verdict.by === 'lease' && !this.#watch.sawRenewal(formatOwner(head.owner)) && !leaseDatable(head)) {
        undecided = true;
        continue;
      }
      return 'live';
    }
    if (undecided) return 'undecided';
    for (const { base, head } of expired) if (!this.#revoke(base, head)) return 'live';
    return 'none';
  }

  /**
   * KeptLease: writes `stampMs` as this record's lease stamp, then reads the
   * record back: fenced when it was taken over or its lease was revoked.
   */
  renewLease(stampMs: number): string | undefined {
    if (this.#fd < 0 || this.#fenced !== undefined) return this.#fenced;
    const previous = this.#leaseStamp;
    let stamp = stampMs >>> 0;
    // Never write the value an observer wrote as revoked: that would read as a revocation.
    if (stamp === this.#revokedSeen) stamp = (stamp + 1) >>> 0;
    if (stamp === previous) return undefined;
    this.#mine.writeUInt32LE(stamp, REC.leaseStamp);
    writeSync(this.#fd, this.#mine, REC.leaseStamp, 4, this.index * RECORD_SIZE + REC.leaseStamp);
    this.#leaseStamp = stamp;
    const one = this.#one;
    const got = readSync(this.#fd, one, 0, RECORD_SIZE, this.index * RECORD_SIZE);
    const problem = got < RECORD_SIZE ? 'its lock record is gone' : this.#selfProblem(one, 0, previous);
    if (problem !== undefined) {
      if (got === RECORD_SIZE && one.readUInt32LE(REC.pid) === this.owner.pid && one.readUInt32LE(REC.connection) === this.owner.connection) {
        // Revoked: the stamp just written would make the record look alive again; revoke it anew.
        one.writeUInt32LE(stamp, REC.revokedStamp);
        writeSync(this.#fd, one, REC.revokedStamp, 4, this.index * RECORD_SIZE + REC.revokedStamp);
      }
      return this.#fence(problem);
    }
    this.#revokedSeen = one.readUInt32LE(REC.revokedStamp);
    const gone = sameFileProblem(this.#fd, lockTablePath(this.dbPath)) ?? this.#fileChecks.map((check) => check()).find((p) => p !== undefined);
    if (gone === undefined) return undefined;
    // The record is still ours and nobody revoked it: let go of its locks at once, so nobody waits on a connection that will never write again.
    this.#ownRecordIntact = true;
    this.write(LOCK_BYTES.from, LOCK_BYTES.count, 0);
    return this.#fence(gone);
  }

  /**
   * Adds a check run with every lease renewal (once a second): it returns why
   * a file this connection relies on was deleted or replaced. Returns the
   * function that removes the check.
   */
  addFileCheck(check: () => string | undefined): () => void {
    this.#fileChecks.push(check);
    return () => {
      const i = this.#fileChecks.indexOf(check);
      if (i >= 0) this.#fileChecks.splice(i, 1);
    };
  }

  /** Why the copy of this record at `buf[base]` says it is no longer ours; `stamp`: our stamp as of that copy. */
  #selfProblem(buf: Buffer, base: number, stamp: number): string | undefined {
    if (buf.readUInt32LE(base + REC.pid) !== this.owner.pid || buf.readUInt32LE(base + REC.connection) !== this.owner.connection) {
      return 'its lock record was taken over';
    }
    if (buf.readUInt32LE(base + REC.revokedStamp) === stamp) {
      return `its lease was revoked by another process (this process was stopped or starved for longer than the lease)`;
    }
    return undefined;
  }

  #fence(reason: string): string {
    const full = `the lock of ${this.dbPath} held by this process (pid ${this.owner.pid}, connection ${this.owner.connection}) was lost: ${reason}; close and reopen the database`;
    this.#fenced = full;
    liveness.fence(this.dbPath, full);
    return full;
  }

  /** Why this record may not be used any more; undefined while it may. */
  get fenced(): string | undefined {
    return this.#fenced;
  }

  /** Re-reads the whole table (one pread). */
  readTable(): void {
    this.#refresh();
  }

  /**
   * Compares, in the table as last read, every other record's identity and
   * WAL-index stamp with `seen` (updated in place). True when any record was
   * added, reused or pushed since: then the WAL index must be pulled.
   *
   * A slot's stamp only moves forward, whoever owns it: a release leaves it
   * in the free record and the next claim goes on from it. An owner that
   * claimed a slot, pushed and released it between two looks leaves the same
   * free identity behind, so only its stamp tells that it was there (a
   * process that commits and closes at once did exactly that, and readers
   * skipped its commit).
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
    if (this.#fenced !== undefined) throw new Error(this.#fenced);
    const n = readSync(this.#fd, this.#table, 0, this.#table.length, 0);
    this.#tableLength = n - (n % RECORD_SIZE);
    this.#readAt = performance.now();
    if (this.#seenAnswered.size !== 0) this.#seenAnswered.clear();
    count('lock.read');
    // Our own record comes with every read: a revocation or a take-over is noticed at the next lock.
    const base = this.index * RECORD_SIZE;
    const table = this.#table;
    if (
      base + RECORD_SIZE > this.#tableLength ||
      table.readUInt32LE(base + REC.revokedStamp) === this.#leaseStamp ||
      table.readUInt32LE(base + REC.pid) !== this.owner.pid ||
      table.readUInt32LE(base + REC.connection) !== this.owner.connection
    ) {
      const problem = base + RECORD_SIZE > this.#tableLength ? 'its lock record is gone' : this.#selfProblem(table, base, this.#leaseStamp);
      if (problem !== undefined) throw new Error(this.#fence(problem));
    }
  }

  /** False once release() has given the record back: the table can no longer be read through it. */
  get open(): boolean {
    return this.#fd !== -1;
  }

  /**
   * Clears every lock byte and gives the record back, under the admin lock.
   * The last connection that counts removes the table and the admin folder,
   * so a closed database leaves only SQLite's own files behind. A record
   * fenced because it was revoked or taken over is left as it is: it may
   * belong to someone else by now.
   */
  release(): void {
    if (this.#fd < 0) return;
    liveness.release(this);
    try {
      if (this.#fenced !== undefined && !this.#ownRecordIntact) return;
      // Own lock bytes may always be cleared; only the identity needs the admin lock.
      this.write(LOCK_BYTES.from, LOCK_BYTES.count, 0);
      withAdminLock(this.dbPath, this.owner, () => {
        // A free record keeps its push stamp: the next owner goes on from it (see othersPushedSince).
        const free = Buffer.alloc(RECORD_SIZE);
        free.writeInt32LE(this.#stamp, REC.shmStamp);
        writeSync(this.#fd, free, 0, RECORD_SIZE, this.index * RECORD_SIZE);
        const n = readSync(this.#fd, this.#table, 0, this.#table.length, 0);
        this.#tableLength = n - (n % RECORD_SIZE);
        let othersCount = false;
        for (let base = 0; base < this.#tableLength; base += RECORD_SIZE) {
          if (base === this.index * RECORD_SIZE || this.#table.readUInt32LE(base + REC.pid) === 0) continue;
          if (this.#counts(base, 'keep')) {
            othersCount = true;
            break;
          }
        }
        if (!othersCount) {
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

/**
 * Why the file open as `fd` is no longer the one at `path` (deleted, or
 * replaced by another file), or undefined while it is. Someone removed it
 * while agentbus had the database open: processes that open the database
 * from now on use another file and no longer see this one's locks.
 */
export function sameFileProblem(fd: number, path: string): string | undefined {
  const open = fstatSync(fd);
  const now = statSync(path, { throwIfNoEntry: false });
  if (open.nlink > 0 && now !== undefined && now.ino === open.ino && now.dev === open.dev) return undefined;
  return `${path} was ${now === undefined || open.nlink === 0 ? 'deleted' : 'replaced'} while this process had the database open, so its locks no longer protect the database from processes opening it now; never delete the files beside the database while agents run`;
}

/** Judges another record's owner (never this connection's own record). */
function judgeRecord(head: RecordHead, watch: LeaseWatch): OwnerVerdict {
  if (isThisProcess(head.owner)) {
    // One of this process's own connections: alive while that connection is open.
    return liveness.isOpenConnection(head.owner.connection) ? { state: 'alive', by: 'pid' } : { state: 'dead', by: 'pid' };
  }
  return judgeLockOwner(head.owner, head.leased ? head.lease : undefined, isRevoked(head), watch, (p) => liveness.judgePid(p));
}

/** True when the lease's age is known without watching (same boot, comparable clocks). */
function leaseDatable(head: RecordHead): boolean {
  return leaseReadableAtOnce(head.lease);
}
