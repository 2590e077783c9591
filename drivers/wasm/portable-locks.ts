/**
 * The `portable` lock protocol for the database file's lock levels (SHARED,
 * RESERVED, PENDING, EXCLUSIVE), on top of the lock table. The rules follow
 * SQLite's unix file layer, so SQLite's pager sees the behaviour it expects:
 * - SHARED is refused while another connection holds PENDING or EXCLUSIVE;
 * - RESERVED is refused while another connection holds RESERVED;
 * - EXCLUSIVE first takes PENDING (which stops new readers), then succeeds
 *   only when no other connection holds SHARED; if readers remain, the
 *   connection keeps PENDING and answers BUSY, as unix does, and SQLite retries.
 * Every check is Dekker's handshake (see lock-table.ts), so two takers can
 * never both win. In WAL mode a connection holds SHARED for its whole life and
 * only the last closer (or a journal-mode switch) reaches EXCLUSIVE.
 */
import { REC } from '../../src/db/lock-records/portable-lock-files.js';
import type { LockRecord, Refusal } from './lock-table.js';
import { SQLITE_OK } from './sqlite-codes.js';

/** SQLite's lock levels (sqlite3.h SQLITE_LOCK_*). */
export const LOCK = { NONE: 0, SHARED: 1, RESERVED: 2, PENDING: 3, EXCLUSIVE: 4 } as const;


const CONFLICTS_SHARED = [REC.dbPending, REC.dbExclusive];
const CONFLICTS_RESERVED = [REC.dbReserved];
const CONFLICTS_PENDING = [REC.dbPending];
const CONFLICTS_EXCLUSIVE = [REC.dbShared];
const CONFLICTS_ANY_WRITER = [REC.dbReserved, REC.dbPending, REC.dbExclusive];

/** Hooks the WAL index needs around the EXCLUSIVE level (trap 2, "Last closer in exclusive mode": docs/drivers.md, "The WAL index across processes"). */
export interface ExclusiveHooks {
  /** Called right after EXCLUSIVE is granted: bring the private WAL index up to date. */
  onExclusive(): void;
  /** Called right before EXCLUSIVE is given up: publish the private WAL index. */
  beforeExclusiveRelease(): void;
}

/** The database-file lock state of one connection. */
export class DatabaseLock {
  /** The level SQLite believes this connection holds. */
  level: number = LOCK.NONE;
  readonly #record: LockRecord;
  #hooks: ExclusiveHooks | undefined;

  constructor(record: LockRecord) {
    this.#record = record;
  }

  /** Installs the WAL-index hooks once the index is mapped. */
  setHooks(hooks: ExclusiveHooks | undefined): void {
    this.#hooks = hooks;
  }

  /** xLock: raises the level; returns undefined when granted, else why not (SQLITE_BUSY). */
  lock(target: number): Refusal | undefined {
    if (this.level >= target) return undefined;
    const rec = this.#record;
    if (target === LOCK.SHARED) {
      if (!rec.tryTake(REC.dbShared, 1, CONFLICTS_SHARED)) return rec.refused(CONFLICTS_SHARED);
      this.level = LOCK.SHARED;
      return undefined;
    }
    if (target === LOCK.RESERVED) {
      if (!rec.tryTake(REC.dbReserved, 1, CONFLICTS_RESERVED)) return rec.refused(CONFLICTS_RESERVED);
      this.level = LOCK.RESERVED;
      return undefined;
    }
    // EXCLUSIVE (SQLite never asks for PENDING directly).
    if (!rec.holds(REC.dbPending)) {
      if (!rec.tryTake(REC.dbPending, 1, CONFLICTS_PENDING)) return rec.refused(CONFLICTS_PENDING);
      this.level = LOCK.PENDING;
    }
    // In WAL mode (hooks installed) only the last closer and journal-mode switches reach EXCLUSIVE, and
    // every connection holds SHARED for life: tidying, so a stopped process of another realm is not revoked for it.
    const purpose = this.#hooks === undefined ? 'take' : 'keep';
    if (!rec.tryTake(REC.dbExclusive, 1, CONFLICTS_EXCLUSIVE, purpose)) return rec.refused(CONFLICTS_EXCLUSIVE, purpose);
    this.level = LOCK.EXCLUSIVE;
    this.#hooks?.onExclusive();
    return undefined;
  }

  /** xUnlock: lowers the level to SHARED or NONE. */
  unlock(target: number): number {
    if (this.level <= target) return SQLITE_OK;
    const rec = this.#record;
    if (this.level === LOCK.EXCLUSIVE) this.#hooks?.beforeExclusiveRelease();
    if (target === LOCK.SHARED) {
      rec.write(REC.dbReserved, 3, 0);
      this.level = LOCK.SHARED;
    } else {
      rec.write(REC.dbShared, 4, 0);
      this.level = LOCK.NONE;
    }
    return SQLITE_OK;
  }

  /** xCheckReservedLock: whether another live connection holds RESERVED or more. */
  othersReserved(): boolean {
    if (this.level >= LOCK.RESERVED) return false;
    return this.#record.othersHoldAny(CONFLICTS_ANY_WRITER);
  }
}
