/**
 * The maintenance lease: one row, taken with the design's conditional UPDATE,
 * so at most one process runs a tick at a time. The lease bounds duplicated
 * effort, not correctness: every step is idempotent.
 */
import type { Database } from '../db/database.js';

/**
 * Takes or renews the lease for `owner` until `now + ttlMs`. True when this
 * owner now holds it: the lease was free, expired, or already this owner's.
 */
export function acquireLease(db: Database, owner: string, now: number, ttlMs: number): boolean {
  return db.transaction(() => {
    // A reset re-seeds the row, but a missing row must never stop maintenance for good.
    db.run("INSERT OR IGNORE INTO leases (name, owner, expires_at) VALUES ('maintenance', '', 0)");
    const result = db.run(
      "UPDATE leases SET owner = ?, expires_at = ? WHERE name = 'maintenance' AND (expires_at < ? OR owner = ?)",
      [owner, now + ttlMs, now, owner],
    );
    return result.changes === 1;
  });
}

/** Gives the lease up if `owner` holds it, so another process need not wait for expiry. */
export function releaseLease(db: Database, owner: string): boolean {
  const result = db.run("UPDATE leases SET owner = '', expires_at = 0 WHERE name = 'maintenance' AND owner = ?", [owner]);
  return result.changes === 1;
}

/** Who holds the lease and until when (`owner` is empty when free). */
export function readLease(db: Database): { readonly owner: string; readonly expiresAt: number } | undefined {
  const row = db.get<{ owner: string; expires_at: number }>("SELECT owner, expires_at FROM leases WHERE name = 'maintenance'");
  return row === undefined ? undefined : { owner: row.owner, expiresAt: row.expires_at };
}
