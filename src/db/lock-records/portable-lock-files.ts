/**
 * The on-disk format of the `portable` lock protocol's files beside a
 * database: their names, the lock table's record layout and the owner text
 * of admin markers. The wasm driver runs the protocol over them; the admin
 * CLI (`doctor`, `convert`) only reads them, without loading any driver. One
 * definition for both, like the file header's application_id.
 */

import { createHash } from 'node:crypto';
import { readSync, writeSync } from 'node:fs';
import type { LeaseStamp } from './owner-lease.js';
import { currentProcess, type ProcessIdentity, type ProcessRealm } from '../processes/process-identity.js';

/** Who holds a record in the lock table or an admin marker. */
export interface LockOwner {
  /** OS process id, as seen in the owner's own pid namespace. */
  readonly pid: number;
  /** Process start time in clock ticks since boot (0 where /proc is absent). */
  readonly startTime: number;
  /** Connection number inside that process, so two connections of one process exclude each other. */
  readonly connection: number;
  /** The owner's realm (boot + pid namespace); undefined when unknown or not recorded (an older agentbus). */
  readonly realm: ProcessRealm | undefined;
}

/** The lock table: one record per open connection. */
export function lockTablePath(dbPath: string): string {
  return `${dbPath}-locks`;
}

/** The folder of admin markers (the mutex for rare operations), one empty file per contender. */
export function adminMarkerDir(dbPath: string): string {
  return `${dbPath}-locks.d`;
}

/** Bytes per lock-table record; record i starts at i * RECORD_SIZE. A record whose pid is 0 is free. */
export const RECORD_SIZE = 64;

/** Byte offsets inside a record. */
export const REC = {
  /** u32 LE owner pid. */
  pid: 0,
  /** u32 LE connection number inside the owner. */
  connection: 4,
  /** f64 LE owner start time. */
  startTime: 8,
  dbShared: 16,
  dbReserved: 17,
  dbPending: 18,
  dbExclusive: 19,
  /** First of eight bytes: WAL-index slot i held shared. */
  shmShared: 20,
  /** First of eight bytes: WAL-index slot i held exclusive. */
  shmExclusive: 28,
  /** Set while the owner has the WAL index open (the dead-man switch). */
  shmOpen: 36,
  /** Format flags (RECORD_FLAG); 0 in a record written by an agentbus before leases. */
  flags: 37,
  /** u32 bumped after every push to the WAL index: others pull only when some stamp moved. */
  shmStamp: 40,
  /** 8 bytes: the owner's boot key (bootKey()); zero when its realm is unknown. */
  bootKey: 44,
  /** u32 LE: the owner's pid namespace inode. */
  pidNamespace: 52,
  /** u32 LE: the owner's lease stamp, its monotonic clock in ms at its last renewal. */
  leaseStamp: 56,
  /** u32 LE: written by an observer that revoked the lease; the lease is revoked while it equals leaseStamp. */
  revokedStamp: 60,
} as const;

/** Bits of the flags byte. */
export const RECORD_FLAG = {
  /** The record carries realm, lease stamp and revocation (bytes 44..63). */
  leased: 1,
  /** The realm bytes are known (the owner could read its boot id and pid namespace). */
  realmKnown: 2,
  /** The lease stamp is on the owner's boot's own monotonic clock (no time namespace). */
  bootClock: 4,
} as const;

/** Bytes 16..36: every lock byte of a record, cleared together when a connection lets go. */
export const LOCK_BYTES = { from: REC.dbShared, count: REC.shmOpen + 1 - REC.dbShared } as const;

/**
 * 8 bytes standing for a boot: the first half of the kernel's random boot id,
 * or a hash of `host:<name>` where there is none. Two boots share a key with
 * probability 2^-64.
 */
export function bootKey(boot: string): Buffer {
  if (/^[0-9a-f]{32}$/.test(boot)) return Buffer.from(boot.slice(0, 16), 'hex');
  if (/^key:[0-9a-f]{16}$/.test(boot)) return Buffer.from(boot.slice(4), 'hex');
  return createHash('sha256').update(boot).digest().subarray(0, 8);
}

/** This process's boot key, computed once (the boot does not change under a running process). */
let ownBootKey: Buffer | null | undefined;

function myBootKey(): Buffer | null {
  if (ownBootKey === undefined) {
    const mine = currentProcess().realm;
    ownBootKey = mine === undefined ? null : bootKey(mine.boot);
  }
  return ownBootKey;
}

/** The realm a stored boot key and namespace stand for: this process's own when the key matches. */
function realmFromKey(key: Buffer, pidNamespace: number): ProcessRealm {
  const mine = currentProcess().realm;
  const myKey = myBootKey();
  if (mine !== undefined && myKey !== null && key.equals(myKey)) {
    return mine.pidNamespace === pidNamespace ? mine : { boot: mine.boot, pidNamespace };
  }
  return { boot: `key:${key.toString('hex')}`, pidNamespace };
}

/** A record's head: who owns it and the state of its lease. */
export interface RecordHead {
  /** The owner. */
  readonly owner: LockOwner;
  /** False for a record of an agentbus before leases: no realm, no lease, judged only as such. */
  readonly leased: boolean;
  /** The lease as last renewed (meaningful when leased). */
  readonly lease: LeaseStamp;
  /** What an observer wrote when it revoked the lease; revoked while equal to lease.stampMs. */
  readonly revokedStamp: number;
}

/** True when an observer revoked this record's lease (and the owner has not renewed since). */
export function isRevoked(head: RecordHead): boolean {
  return head.leased && head.revokedStamp === head.lease.stampMs;
}

/** Reads the head of the record starting at `base`. */
export function readRecordHead(buf: Buffer, base: number): RecordHead {
  const flags = buf[base + REC.flags] ?? 0;
  const leased = (flags & RECORD_FLAG.leased) !== 0;
  const realm =
    leased && (flags & RECORD_FLAG.realmKnown) !== 0
      ? realmFromKey(buf.subarray(base + REC.bootKey, base + REC.bootKey + 8), buf.readUInt32LE(base + REC.pidNamespace))
      : undefined;
  const owner: LockOwner = {
    pid: buf.readUInt32LE(base + REC.pid),
    connection: buf.readUInt32LE(base + REC.connection),
    startTime: buf.readDoubleLE(base + REC.startTime),
    realm,
  };
  return {
    owner,
    leased,
    lease: { stampMs: buf.readUInt32LE(base + REC.leaseStamp), bootClock: (flags & RECORD_FLAG.bootClock) !== 0, realm },
    revokedStamp: buf.readUInt32LE(base + REC.revokedStamp),
  };
}

/**
 * Writes a fresh record head (identity, realm, lease stamp, no revocation, no
 * locks) into `buf` at `base`: what a connection claiming a record writes.
 */
export function writeRecordHead(buf: Buffer, base: number, owner: LockOwner, lease: { stampMs: number; bootClock: boolean }): void {
  buf.fill(0, base, base + RECORD_SIZE);
  buf.writeUInt32LE(owner.pid, base + REC.pid);
  buf.writeUInt32LE(owner.connection, base + REC.connection);
  buf.writeDoubleLE(owner.startTime, base + REC.startTime);
  let flags = RECORD_FLAG.leased;
  if (owner.realm !== undefined) {
    flags |= RECORD_FLAG.realmKnown;
    bootKey(owner.realm.boot).copy(buf, base + REC.bootKey);
    buf.writeUInt32LE(owner.realm.pidNamespace >>> 0, base + REC.pidNamespace);
  }
  if (lease.bootClock) flags |= RECORD_FLAG.bootClock;
  buf[base + REC.flags] = flags;
  buf.writeUInt32LE(lease.stampMs >>> 0, base + REC.leaseStamp);
  // Anything but the stamp: not revoked.
  buf.writeUInt32LE(~lease.stampMs >>> 0, base + REC.revokedStamp);
}

/** True when two record heads name the same owner (identity and realm bytes). */
export function sameOwner(a: LockOwner, b: LockOwner): boolean {
  if (a.pid !== b.pid || a.connection !== b.connection || a.startTime !== b.startTime) return false;
  if (a.realm === undefined || b.realm === undefined) return a.realm === b.realm;
  return a.realm.pidNamespace === b.realm.pidNamespace && bootKey(a.realm.boot).equals(bootKey(b.realm.boot));
}

/** The owner as a process identity (for judgeProcess). */
export function ownerProcess(owner: LockOwner): ProcessIdentity {
  return { pid: owner.pid, startTime: owner.startTime, realm: owner.realm };
}

/** Text form for cache keys and diagnostics: `<pid>-<start>-<conn>` plus `@<bootkey>.<pidns>` when the realm is known. */
export function formatOwner(owner: LockOwner): string {
  const base = `${owner.pid}-${owner.startTime}-${owner.connection}`;
  return owner.realm === undefined ? base : `${base}@${bootKey(owner.realm.boot).toString('hex')}.${owner.realm.pidNamespace}`;
}

/** An admin marker's name: who made it and, except from an older agentbus, its lease stamp. */
export interface AdminMarker {
  /** The contender. */
  readonly owner: LockOwner;
  /** Its stamp when it made the marker; undefined in a marker of an agentbus before leases. */
  readonly lease: LeaseStamp | undefined;
}

/**
 * Admin marker file name: `<pid>-<start>-<conn>@<bootkey|x>.<pidns>~<stamp>[b]`
 * (`b`: the stamp is on the boot's own clock). An agentbus before leases
 * names them `<pid>-<start>-<conn>`.
 */
export function formatAdminMarker(owner: LockOwner, stampMs: number, bootClock: boolean): string {
  const realm = owner.realm === undefined ? 'x.0' : `${bootKey(owner.realm.boot).toString('hex')}.${owner.realm.pidNamespace}`;
  return `${owner.pid}-${owner.startTime}-${owner.connection}@${realm}~${stampMs >>> 0}${bootClock ? 'b' : ''}`;
}

/** Parses an admin marker name (either form); undefined when the name is not one. */
export function parseAdminMarker(name: string): AdminMarker | undefined {
  const m = /^(\d+)-(\d+)-(\d+)(?:@(x|[0-9a-f]{16})\.(\d+)~(\d+)(b?))?$/.exec(name);
  if (m === null) return undefined;
  const realm = m[4] === undefined || m[4] === 'x' ? undefined : realmFromKey(Buffer.from(m[4], 'hex'), Number(m[5]));
  const owner: LockOwner = { pid: Number(m[1]), startTime: Number(m[2]), connection: Number(m[3]), realm };
  if (m[6] === undefined) return { owner, lease: undefined };
  return { owner, lease: { stampMs: Number(m[6]) >>> 0, bootClock: m[7] === 'b', realm } };
}

/**
 * Revokes the expired lease of the record at `base` of the lock table open
 * as `fd`, judged from `head`: writes the stamp it was judged by into the
 * record's revokedStamp, then reads the record again. True (revoked) only
 * when the same owner still shows the same stamp. The owner renews by
 * writing its stamp and then reading revokedStamp, so of an observer and an
 * owner racing at least one sees the other (Dekker's handshake): either the
 * observer sees the new stamp and backs off, or the owner finds its old stamp
 * revoked and fences itself before touching anything shared. `scratch` (at
 * least RECORD_SIZE bytes) receives the record as read back.
 */
export function revokeLease(fd: number, base: number, head: RecordHead, scratch: Buffer): boolean {
  const stamp = head.lease.stampMs;
  scratch.writeUInt32LE(stamp, 0);
  writeSync(fd, scratch, 0, 4, base + REC.revokedStamp);
  if (readSync(fd, scratch, 0, RECORD_SIZE, base) < RECORD_SIZE) return false;
  const now = readRecordHead(scratch, 0);
  return sameOwner(now.owner, head.owner) && now.lease.stampMs === stamp;
}
