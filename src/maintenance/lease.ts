/**
 * The maintenance lease: one row, taken in a write transaction, so at most
 * one process runs a tick at a time. The lease bounds duplicated effort, not
 * correctness: every step is idempotent.
 *
 * The holder records its process and its expiry on its monotonic clock. A
 * holder that is certainly dead loses the lease at once; one whose monotonic
 * clock this process reads too (same boot and time namespace) holds it until
 * that expiry, whatever the wall clock does. Only a holder neither can judge
 * (another machine, an older agentbus) is held to the wall-clock expiry; an
 * older agentbus that takes the lease over writes none of those columns, and
 * sql/0009's trigger clears the previous holder's, so it is judged that way.
 */
import { monotonicScope, type Clock } from '../clock.js';
import type { Database } from '../db/contract/database.js';
import { formatProcessIdentity, judgeProcess, parseProcessIdentity, type ProcessIdentity } from '../db/processes/process-identity.js';

/** Who asks for the lease. */
export interface LeaseHolder {
  /** The owner token written into the lease. */
  readonly owner: string;
  /** The asking process's identity, so others can free the lease the moment it dies; undefined when unknown. */
  readonly process: ProcessIdentity | undefined;
  /** The asking process's clock: wall time for older readers, monotonic time for the expiry. */
  readonly clock: Clock;
}

interface LeaseRow {
  owner: string;
  expires_at: number;
  owner_process: string | null;
  clock_domain: string | null;
  expires_mono: number | null;
}

function isFree(row: LeaseRow, holder: LeaseHolder, scope: string): boolean {
  if (row.owner === '' || row.owner === holder.owner) return true;
  const identity = row.owner_process === null ? undefined : parseProcessIdentity(row.owner_process);
  if (identity !== undefined && judgeProcess(identity) === 'dead') return true;
  if (row.clock_domain === scope && row.expires_mono !== null) return row.expires_mono < holder.clock.monotonic();
  return row.expires_at < holder.clock.now();
}

/**
 * Takes or renews the lease for `holder` for `ttlMs`. True when the holder
 * now holds it: the lease was free, expired, its holder dead, or already its own.
 */
export function acquireLease(db: Database, holder: LeaseHolder, ttlMs: number): boolean {
  const scope = monotonicScope(holder.clock, holder.owner);
  return db.transaction(() => {
    // A reset re-seeds the row, but a missing row must never stop maintenance for good.
    // ON CONFLICT DO NOTHING, not INSERT OR IGNORE: the spelling both SQLite and PostgreSQL have.
    db.run("INSERT INTO leases (name, owner, expires_at) VALUES ('maintenance', '', 0) ON CONFLICT (name) DO NOTHING");
    const row = db.get<LeaseRow>("SELECT owner, expires_at, owner_process, clock_domain, expires_mono FROM leases WHERE name = 'maintenance'");
    if (row === undefined || !isFree(row, holder, scope)) return false;
    db.run("UPDATE leases SET owner = ?, expires_at = ?, owner_process = ?, clock_domain = ?, expires_mono = ? WHERE name = 'maintenance'", [
      holder.owner,
      holder.clock.now() + ttlMs,
      holder.process === undefined ? null : formatProcessIdentity(holder.process),
      scope,
      holder.clock.monotonic() + ttlMs,
    ]);
    return true;
  });
}

/** Gives the lease up if `owner` holds it, so another process need not wait for expiry. */
export function releaseLease(db: Database, owner: string): boolean {
  const result = db.run(
    "UPDATE leases SET owner = '', expires_at = 0, owner_process = NULL, clock_domain = NULL, expires_mono = NULL WHERE name = 'maintenance' AND owner = ?",
    [owner],
  );
  return result.changes === 1;
}

/** Who holds the lease and until when on the wall clock (`owner` is empty when free). */
export function readLease(db: Database): { readonly owner: string; readonly expiresAt: number } | undefined {
  const row = db.get<{ owner: string; expires_at: number }>("SELECT owner, expires_at FROM leases WHERE name = 'maintenance'");
  return row === undefined ? undefined : { owner: row.owner, expiresAt: row.expires_at };
}
