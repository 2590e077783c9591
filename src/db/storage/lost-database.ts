/**
 * The emptied database: `agentbus.db` empty (0 bytes) or not SQLite any
 * more, or SQLite with no schema, in a data directory that shows a bus was
 * there. agentbus made that file and it is never legitimately so once a
 * server used it, so making it a new empty bus would bury the loss. Only
 * traces that appear after a database had its schema count as evidence; the
 * lock files and the openers' directory do not (they are made before the
 * first page is written, so a first start that failed on a full disk leaves
 * them beside an empty file). Looked for only when the file is in such a
 * state, never on an ordinary start.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { backupDir, listBackups, restoreSteps } from './backups.js';
import type { Database } from '../contract/database.js';
import type { FileState } from './file-header.js';

/** The log file (src/log.ts LOG_FILE: not imported here, it would load the logger into every storage user). */
const LOG_FILE = 'agentbus.log';
/** The directory of inbox files (src/harness/inbox-file.ts INBOX_DIR, a layer above this one). */
const INBOX_DIR = 'inbox';
/** What a server logs once it opened the database (bus-process.ts). */
const SERVER_STARTED = '"mcp start"';
/** How much of the log's start is read for it. */
const LOG_HEAD_BYTES = 256 * 1024;

function head(path: string, bytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const buffer = Buffer.alloc(bytes);
    const length = readSync(fd, buffer, 0, bytes, 0);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Why the data directory shows a bus was in use there, in words for a
 * person; undefined when nothing does (a first start, or one that never got
 * as far as a schema). `walBytes`: the -wal's size beside an empty file.
 */
export function busEvidence(dataDir: string, walBytes: number): string | undefined {
  if (listBackups(dataDir).length > 0) return 'backups show a bus was here';
  // SQLite writes the main file's first page before any WAL frame: a WAL beside an empty file means the file was emptied.
  if (walBytes > 0) return `its -wal holds ${walBytes} bytes`;
  const inbox = entries(join(dataDir, INBOX_DIR)).length;
  if (inbox > 0) return `${join(dataDir, INBOX_DIR)} holds ${inbox} inbox file(s) of agent sessions`;
  const logs = entries(dataDir).filter((f) => f.startsWith(LOG_FILE) && f !== LOG_FILE);
  if (logs.length > 0 || head(join(dataDir, LOG_FILE), LOG_HEAD_BYTES).includes(SERVER_STARTED)) {
    return `${join(dataDir, LOG_FILE)} records agentbus servers that used it`;
  }
  return undefined;
}

/**
 * An empty file, or one that is not SQLite at all, where the data directory
 * shows a bus was in use (busEvidence): the database lost its content
 * (truncated, overwritten). Returns what to tell a person (what happened, the
 * newest backup and how to restore it, or `agentbus reset` to start empty on
 * purpose); undefined when the file is fine to open or create.
 */
export function lostDatabaseMessage(path: string, dataDir: string, state: FileState): string | undefined {
  const lostContent = state.kind === 'empty' || (state.kind === 'foreign' && state.notSqlite === true);
  if (!lostContent) return undefined;
  return lostMessage(path, dataDir, state.kind === 'empty' ? 'is empty (0 bytes)' : 'is not a SQLite database any more');
}

/**
 * The same for an agentbus file without any table (its schema gone); a first
 * start that stopped before its first migration leaves no evidence and goes on.
 */
export function lostSchemaMessage(db: Database, dataDir: string): string | undefined {
  const tables = db.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")?.n ?? 0;
  if (tables > 0) return undefined;
  return lostMessage(db.path, dataDir, 'has no tables (an agentbus file without its schema)');
}

function lostMessage(path: string, dataDir: string, what: string): string | undefined {
  const walBytes = statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  const why = busEvidence(dataDir, walBytes);
  if (why === undefined) return undefined;
  const newest = listBackups(dataDir)[0];
  const restore =
    newest === undefined
      ? `no backup was found in ${backupDir(dataDir)}; if you have one elsewhere, ${restoreSteps('<backup>')}`
      : `the newest backup is ${newest.path} (written ${new Date(newest.mtimeMs).toISOString()}); to restore it, ${restoreSteps(newest.path)}`;
  return (
    `${path} ${what}, but ${why}: it lost its content, and agentbus will not start a new empty bus over it. ` +
    `${restore}. To start a new empty bus on purpose instead, run \`agentbus reset\` (backups are kept).`
  );
}
