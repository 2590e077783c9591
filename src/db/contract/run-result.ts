/**
 * The RunResult both drivers return. A rowid beyond what a JS number holds
 * exactly is refused when it is read, not when the statement runs: the
 * statement did run, and last_insert_rowid() is connection state that an
 * UPDATE after a huge-rowid INSERT would otherwise also trip over.
 */
import type { RunResult } from './driver.js';
import { unsafeIntegerError } from './statement-parameters.js';

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A RunResult; `rowid` is exact as a bigint, or as a number only when it is a safe integer. */
export function runResult(changes: number, rowid: number | bigint): RunResult {
  if (typeof rowid === 'number' ? Number.isSafeInteger(rowid) : rowid >= -MAX && rowid <= MAX) {
    return { changes, lastInsertRowid: Number(rowid) };
  }
  const exact = typeof rowid === 'bigint' ? rowid : undefined;
  return {
    changes,
    get lastInsertRowid(): number {
      throw unsafeIntegerError('the last inserted rowid (the statement ran)', exact);
    },
  };
}
