/**
 * Reads what a database file is before any SQLite code touches it, so that a
 * foreign file or one of the other lock protocol is refused byte-identical.
 *
 * The lock protocol lives in the header's application_id (offset 68, big
 * endian). It is written once, at creation, in rollback-journal mode before
 * WAL is switched on, so the main file's header is authoritative even while a
 * WAL is in use; only an offline conversion changes it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { LockProtocol } from '../contract/driver.js';

/** application_id values: "abPX" marks posix, "abPT" portable. */
export const APPLICATION_ID: Readonly<Record<LockProtocol, number>> = {
  posix: 0x61625058,
  portable: 0x61625054,
};

const SQLITE_MAGIC = 'SQLite format 3\u0000';
const HEADER_BYTES = 100;

export type FileState =
  /** No file at the path. */
  | { readonly kind: 'missing' }
  /** A zero-length file: a database SQLite has not written yet. */
  | { readonly kind: 'empty' }
  /** An agentbus database and the lock protocol it records. */
  | { readonly kind: 'agentbus'; readonly protocol: LockProtocol }
  /** Anything else, with a reason a person can act on; `notSqlite` when it is not SQLite at all. */
  | { readonly kind: 'foreign'; readonly reason: string; readonly notSqlite?: boolean };

/** Classifies the file at `path` by its first 100 bytes. Never writes. */
export function readFileState(path: string): FileState {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw error;
  }
  const header = Buffer.alloc(HEADER_BYTES);
  let length: number;
  try {
    length = readSync(fd, header, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  if (length === 0) return { kind: 'empty' };
  if (length < HEADER_BYTES || header.toString('latin1', 0, 16) !== SQLITE_MAGIC) {
    return { kind: 'foreign', reason: `${path} is not a SQLite database`, notSqlite: true };
  }
  const id = header.readUInt32BE(68);
  for (const [protocol, value] of Object.entries(APPLICATION_ID)) {
    if (id === value) return { kind: 'agentbus', protocol: protocol as LockProtocol };
  }
  return {
    kind: 'foreign',
    reason: `${path} is a SQLite database but not an agentbus one (application_id ${id}); point AGENTBUS_DATA_DIR at another directory`,
  };
}
