/**
 * Liveness in the `portable` protocol, both sides of it.
 *
 * As an observer: an owner is a process (pid + start time + realm) plus a
 * connection number inside it, judged by src/db/lock-records/lock-owner-verdict.ts. Asking
 * /proc costs microseconds, so the pid answer is cached: "dead" forever (an
 * identity never comes back, the start time makes it unique), "alive" only
 * briefly, because a live owner may die at any moment and whoever waits on it
 * must notice.
 *
 * As an owner: this process keeps the lease of every lock record it holds
 * (LeaseKeeper). It renews them at least every LEASE_RENEW_MS: from a timer
 * while the event loop is free, and from the file layer's own calls (every
 * xLock, xShmLock, read, write, sync, sleep and busy wait calls tick()) while
 * SQLite runs a long statement. A renewal that finds its lease revoked (this
 * process was stopped or starved for longer than the lease) or its record
 * taken over fences the database: every file of it opened before answers
 * SQLITE_IOERR and writes nothing more, since others may already have acted
 * on its locks. The hot path pays one clock read per file-layer call.
 */
import type { LockOwner } from '../../src/db/lock-records/portable-lock-files.js';
import { LEASE_RENEW_MS } from '../../src/db/lock-records/owner-lease.js';
import { currentProcess, judgeProcess, type Liveness, type ProcessIdentity } from '../../src/db/processes/process-identity.js';
import { count } from './vfs-stats.js';

/** How long a positive liveness answer is trusted before /proc is read again. */
export const ALIVE_CACHE_MS = 25;

/** A lease this process keeps: one lock record. */
export interface KeptLease {
  /** The database the record locks. */
  readonly dbPath: string;
  /**
   * Writes a fresh stamp (`stampMs`) and checks the record is still this
   * connection's and not revoked; returns why not, or undefined when all is well.
   */
  renewLease(stampMs: number): string | undefined;
}

/**
 * The per-process state of the protocol's liveness: connection numbers, the
 * cache of pid answers, the leases to renew and the fenced databases.
 */
class ProcessLiveness {
  readonly #openConnections = new Set<number>();
  #nextConnection = 1;
  readonly #dead = new Set<string>();
  readonly #aliveUntil = new Map<string, number>();
  readonly #leases = new Set<KeptLease>();
  #nextRenewal = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Per database: files opened before this generation are fenced, and why. */
  readonly #fenced = new Map<string, { generation: number; reason: string }>();
  #generation = 1;

  openConnection(): number {
    const n = this.#nextConnection++;
    this.#openConnections.add(n);
    return n;
  }

  closeConnection(n: number): void {
    this.#openConnections.delete(n);
  }

  isOpenConnection(n: number): boolean {
    return this.#openConnections.has(n);
  }

  judgePid(owner: ProcessIdentity): Liveness {
    const key = `${owner.pid}-${owner.startTime}@${owner.realm?.boot}.${owner.realm?.pidNamespace}`;
    if (this.#dead.has(key)) return 'dead';
    const now = performance.now();
    const until = this.#aliveUntil.get(key);
    if (until !== undefined && until > now) return 'alive';
    const verdict = judgeProcess(owner);
    if (verdict === 'dead') {
      this.#aliveUntil.delete(key);
      this.#dead.add(key);
    } else if (verdict === 'alive') {
      this.#aliveUntil.set(key, now + ALIVE_CACHE_MS);
    }
    return verdict;
  }

  keep(lease: KeptLease): void {
    this.#leases.add(lease);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.tick(), LEASE_RENEW_MS);
      this.#timer.unref();
    }
  }

  release(lease: KeptLease): void {
    this.#leases.delete(lease);
    if (this.#leases.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Renews every kept lease when the last renewal is LEASE_RENEW_MS old. One clock read when not due (kept tiny: it is inlined into every file-layer call). */
  tick(): void {
    if (performance.now() >= this.#nextRenewal) this.#renewAll();
  }

  #renewAll(): void {
    this.#nextRenewal = performance.now() + LEASE_RENEW_MS;
    if (this.#leases.size === 0) return;
    count('lease.renew');
    const stampMs = Number(process.hrtime.bigint() / 1_000_000n) >>> 0;
    for (const lease of this.#leases) {
      const problem = lease.renewLease(stampMs);
      if (problem !== undefined) this.fence(lease.dbPath, problem);
    }
  }

  /** A generation number for a file being opened now. */
  nextGeneration(): number {
    return this.#generation++;
  }

  /** Fences every file of `dbPath` opened so far. */
  fence(dbPath: string, reason: string): void {
    count('lease.fenced');
    this.#fenced.set(dbPath, { generation: this.#generation++, reason });
  }

  /** Why a file of `dbPath` opened at `generation` must do nothing more; undefined when it may go on. */
  fencedReason(dbPath: string | undefined, generation: number): string | undefined {
    if (this.#fenced.size === 0 || dbPath === undefined) return undefined;
    const f = this.#fenced.get(dbPath);
    return f !== undefined && generation < f.generation ? f.reason : undefined;
  }
}

/** This process's liveness state (one per process, like its pid). */
export const liveness = new ProcessLiveness();

/** Allocates a connection number for this process and marks it open. */
export function openConnectionNumber(): number {
  return liveness.openConnection();
}

/** Marks a connection number closed: its records then count as abandoned. */
export function closeConnectionNumber(n: number): void {
  liveness.closeConnection(n);
}

/** This process's identity with a given connection number. */
export function selfOwner(connection: number): LockOwner {
  const me = currentProcess();
  return { pid: me.pid, startTime: me.startTime, connection, realm: me.realm };
}

/** True when `owner` is this very process (same pid, start time and realm). */
export function isThisProcess(owner: LockOwner): boolean {
  const me = currentProcess();
  if (owner.pid !== me.pid || owner.startTime !== me.startTime) return false;
  if (owner.realm === undefined || me.realm === undefined) return owner.realm === me.realm;
  return owner.realm.boot === me.realm.boot && owner.realm.pidNamespace === me.realm.pidNamespace;
}
