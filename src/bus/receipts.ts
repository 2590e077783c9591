/**
 * Idempotency receipts: `idempotency_key` is scoped to the sender; the first
 * result is stored with a fingerprint of the operation and its payload for
 * at least `receipt_retention_minutes`. The same key with the same payload
 * returns the stored result (no new row, no hook run, no rate charge); the
 * same key with another payload is `conflict`.
 *
 * A stored receipt is honoured for as long as it exists: only the
 * maintenance tick removes receipts, and it measures their age on a monotonic
 * clock (src/maintenance/stale-rows.ts), so a wall clock set forward never
 * turns a retry into a second row. Keeping a receipt a little longer costs a
 * row; dropping it early duplicates a message.
 *
 * Use: before any side effect, `findReceipt` (outside or inside a
 * transaction); inside the write transaction, `findReceipt` again (another
 * process may have committed the same key meanwhile) and `storeReceipt`.
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { monotonicScope } from '../clock.js';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';

export const IdempotencyKeyField = v.pipe(
  v.string('must be a string: a key you choose for this one operation, reused only to retry it'),
  v.minLength(1, 'must not be empty; omit it to send without a receipt'),
  v.maxLength(256, 'must be at most 256 characters'),
);

/** JSON with object keys sorted at every depth, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** sha256 over the operation name and the canonical payload (the validated input without `as` and the key). */
export function receiptFingerprint(operation: string, payload: unknown): string {
  return createHash('sha256').update(operation).update('\0').update(canonicalJson(payload)).digest('hex');
}

/**
 * The stored result for (sender, key) if a receipt exists with this
 * fingerprint; undefined when there is none. Throws `conflict` when the key
 * was used for a different payload.
 */
export function findReceipt<T>(ctx: BusContext, sender: string, key: string, fingerprint: string): T | undefined {
  const row = ctx.db.get<{ fingerprint: string; result: string }>('SELECT fingerprint, result FROM receipts WHERE sender = ? AND key = ?', [sender, key]);
  if (row === undefined) return undefined;
  if (row.fingerprint !== fingerprint) {
    throw new BusError(
      'conflict',
      `idempotency_key: this key was already used for a different operation or payload within receipt_retention_minutes (${ctx.config.receipt_retention_minutes}); use a new key for a new operation`,
      { field: 'idempotency_key' },
    );
  }
  return JSON.parse(row.result) as T;
}

/**
 * Stores the result of a keyed operation; call inside the operation's write
 * transaction, after findReceipt found none. The age starts on this
 * process's monotonic clock; `expires_at` (wall clock) is what older
 * agentbus versions sharing the file read.
 */
export function storeReceipt(ctx: BusContext, sender: string, key: string, fingerprint: string, result: unknown): void {
  const expiresAt = ctx.clock.now() + ctx.config.receipt_retention_minutes * 60_000;
  ctx.db.run(
    `INSERT INTO receipts (sender, key, fingerprint, result, expires_at, clock_domain, created_mono) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (sender, key) DO UPDATE SET fingerprint = excluded.fingerprint, result = excluded.result, expires_at = excluded.expires_at,
       clock_domain = excluded.clock_domain, created_mono = excluded.created_mono`,
    [sender, key, fingerprint, JSON.stringify(result), expiresAt, monotonicScope(ctx.clock, ctx.owner), ctx.clock.monotonic()],
  );
}
