/**
 * An operating-system error (an errno such as ENOSPC, EACCES, EROFS) that got
 * past the layers that name their files, as the one line the CLI prints:
 * a person needs what failed and what to do, not a stack trace.
 */
import { dirname } from 'node:path';
import { DbError } from '../db/contract/db-error.js';
import { storageError } from '../db/storage/storage-error.js';

/** The line for `error` when it is an errno error; undefined for anything else (a bug, which keeps its stack). */
export function systemErrorLine(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException | undefined;
  if (!(e instanceof Error) || typeof e.code !== 'string' || !/^E[A-Z]+$/.test(e.code)) return undefined;
  const converted = storageError(e, e.path === undefined ? process.cwd() : dirname(e.path));
  return converted instanceof DbError ? converted.message : e.message;
}
