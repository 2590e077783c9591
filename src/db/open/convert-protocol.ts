/**
 * Moving a database file to the other lock protocol. The two protocols must
 * never meet on one file, so this runs only with nobody else on it: the
 * caller holds the set-up lock (no agentbus process can open the file
 * meanwhile) and has found no holder (file-holders.ts). Both `agentbus
 * convert` and a process that can speak only the portable protocol meeting a
 * posix file (open-database.ts) run these same steps:
 * 1. open with `reader` and check integrity (a damaged file is left alone);
 * 2. checkpoint the WAL (TRUNCATE) and leave WAL mode, so the whole database
 *    is in the main file and no -wal or -shm of the old protocol survives;
 * 3. rewrite the header's protocol marker (application_id) with the target
 *    protocol's driver, in rollback mode so it lands in the main file;
 * 4. read the header back.
 * The reader may be the old protocol's driver (its own locks then refuse if
 * some connection was missed) or, when that one cannot run here, the target's:
 * with nobody on the file the old protocol's locks guard nothing.
 */
import { rmSync } from 'node:fs';
import { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';
import type { Driver, LockProtocol } from '../contract/driver.js';
import { APPLICATION_ID, readFileState } from '../storage/file-header.js';
import { integrityProblems } from '../storage/integrity.js';

export interface ConvertSteps {
  /** Called before each step with a short description, for progress output. */
  readonly onStep?: (step: string) => void;
  /** Busy timeout of the connections this opens; nobody should be there, so short. Default 1000 ms. */
  readonly busyTimeoutMs?: number;
}

/**
 * Converts the agentbus database at `path` to protocol `to`. Throws DbError:
 * `corrupt` (integrity check failed), `busy` (a connection was missed: the
 * WAL could not be checkpointed or left), `error` (the header did not change);
 * in each case before anything was written except a checkpoint.
 */
export function convertFileProtocol(path: string, to: LockProtocol, reader: Driver, target: Driver, options: ConvertSteps = {}): void {
  const step = options.onStep ?? (() => undefined);
  const busyTimeoutMs = options.busyTimeoutMs ?? 1_000;
  if (target.capabilities.lockProtocol !== to) throw new Error(`the ${target.capabilities.name} driver does not speak the ${to} protocol`);

  step(`opening with the ${reader.capabilities.name} driver ...`);
  const db = new Database(reader.open(path, { busyTimeoutMs }));
  try {
    step('checking integrity ...');
    const problems = integrityProblems(db);
    if (problems.length > 0) {
      throw new DbError('corrupt', `${path} fails its integrity check (${problems.slice(0, 3).join('; ')}); restore a backup (agentbus restore) before converting; nothing changed`);
    }
    step('checkpointing the WAL ...');
    const checkpoint = db.get<{ busy: number }>('PRAGMA wal_checkpoint(TRUNCATE)');
    if (checkpoint !== undefined && checkpoint.busy !== 0) {
      throw new DbError('busy', `another connection is using ${path} (the WAL checkpoint could not finish); stop every agentbus process and try again; nothing changed`);
    }
    let mode: unknown;
    try {
      mode = db.pragma('journal_mode = DELETE');
    } catch {
      mode = undefined;
    }
    if (mode !== 'delete') {
      throw new DbError('busy', `another connection is using ${path} (SQLite refused to leave WAL mode); stop every agentbus process and try again; nothing changed`);
    }
  } finally {
    db.close();
  }
  // Rollback mode now: the old protocol's WAL index is meaningless to the new one.
  rmSync(`${path}-shm`, { force: true });
  rmSync(`${path}-wal`, { force: true });

  step(`rewriting the header with the ${target.capabilities.name} driver ...`);
  const raw = new Database(target.open(path, { busyTimeoutMs }));
  try {
    raw.exec(`PRAGMA application_id = ${APPLICATION_ID[to]}`);
  } finally {
    raw.close();
  }
  const after = readFileState(path);
  if (after.kind !== 'agentbus' || after.protocol !== to) {
    throw new DbError('error', `the header of ${path} does not read as ${to} after the rewrite; restore a backup (agentbus restore)`);
  }
}
