/**
 * Whether the owner of a lock record still runs. An owner is a process
 * (pid + start time) plus a connection number inside it. Asking /proc costs
 * microseconds, so the answer is cached: "dead" forever (an identity never
 * comes back, the start time makes it unique), "alive" only briefly, because
 * a live owner may die at any moment and whoever waits on it must notice.
 */
import { formatOwner, type LockOwner } from '../../src/db/portable-lock-files.js';
import { currentProcess, isCertainlyDead } from '../../src/db/process-identity.js';

/** How long a positive liveness answer is trusted before /proc is read again. */
const ALIVE_CACHE_MS = 25;

const openConnections = new Set<number>();
let nextConnection = 1;
const deadOwners = new Set<string>();
const aliveUntil = new Map<string, number>();

/** Allocates a connection number for this process and marks it open. */
export function openConnectionNumber(): number {
  const n = nextConnection++;
  openConnections.add(n);
  return n;
}

/** Marks a connection number closed: its records then count as abandoned. */
export function closeConnectionNumber(n: number): void {
  openConnections.delete(n);
}

/** This process's identity with a given connection number. */
export function selfOwner(connection: number): LockOwner {
  const me = currentProcess();
  return { pid: me.pid, startTime: me.startTime, connection };
}

/** True when the owner still runs (and, for this process, the connection is still open). */
export function isOwnerAlive(owner: LockOwner): boolean {
  const me = currentProcess();
  if (owner.pid === me.pid && owner.startTime === me.startTime) return openConnections.has(owner.connection);
  const key = formatOwner(owner);
  if (deadOwners.has(key)) return false;
  const now = Date.now();
  const until = aliveUntil.get(key);
  if (until !== undefined && until > now) return true;
  // Records carry no realm yet: judged as if in this realm (the container hole, issue 11).
  if (!isCertainlyDead({ pid: owner.pid, startTime: owner.startTime, realm: me.realm })) {
    aliveUntil.set(key, now + ALIVE_CACHE_MS);
    return true;
  }
  aliveUntil.delete(key);
  deadOwners.add(key);
  return false;
}
