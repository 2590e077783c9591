/**
 * Maintenance under test: a real database per test, a maintenance runner on
 * it with no lock target unless told, and questions about the full-text
 * index asked in the engine's own terms (capabilities.fullText).
 */
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/contract/database.js';
import { createMemoryLogger } from '../../src/log.js';
import { usedBytes } from '../../src/maintenance/capacity.js';
import { createMaintenance, type Maintenance, type MaintenanceOptions } from '../../src/maintenance/tick.js';
import { ftsHits, ftsIntegrity } from './rows.js';
import { openTestDatabase, tempDir } from './test-driver.js';

export const HOUR = 3_600_000;
/** The instant maintenance tests start their clocks at. */
export const T0 = Date.UTC(2026, 0, 1);

export async function testDb(): Promise<{ db: Database; dir: string }> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  return { db, dir };
}

export function maintenanceFor(db: Database, config: Config, clock: Clock, extra: Partial<MaintenanceOptions> = {}): Maintenance {
  return createMaintenance({ db, config, clock, log: createMemoryLogger(), owner: 'test-owner', processIdentity: undefined, lockTargetMs: Infinity, ...extra });
}

/**
 * Seqs the full-text index itself finds for one word, tombstoned revisions
 * included (search hides those): FTS5's index table, or the messages'
 * tsvector column through its GIN index.
 */
export function indexHits(db: Database, word: string): number[] {
  if (db.capabilities.fullText === 'fts5') return ftsHits(db, word);
  return db.all<{ seq: number }>("SELECT seq FROM messages WHERE content_tsv @@ agentbus_search_query(?) ORDER BY seq", [word]).map((r) => r.seq);
}

/**
 * Throws when the full-text index disagrees with the messages table: FTS5's
 * integrity-check; on tsvector, a row whose vector is not its content's, or a
 * GIN index PostgreSQL marks invalid.
 */
export function indexIntegrity(db: Database): void {
  if (db.capabilities.fullText === 'fts5') return ftsIntegrity(db);
  const stale = db.get<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE content_tsv IS DISTINCT FROM agentbus_search_vector(content)")?.n;
  const valid = db.get<{ valid: number }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'messages_content_tsv'::regclass")?.valid;
  if (stale !== 0 || valid !== 1) throw new Error(`the text index disagrees with messages: ${stale} stale vector(s), GIN index valid: ${valid}`);
}

/** The tables of the bus's schema, by name: SQLite's (less FTS5's shadow tables) or the PostgreSQL schema's. */
export function tableNames(db: Database): string[] {
  const sql =
    db.capabilities.lockProtocol === 'server'
      ? 'SELECT tablename AS name FROM pg_catalog.pg_tables WHERE schemaname = current_schema() ORDER BY tablename'
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts\\_%' ESCAPE '\\' ORDER BY name";
  return db.all<{ name: string }>(sql).map((r) => r.name);
}

/**
 * The capacity measure computed afresh, not through the dialect's query:
 * SQLite's live pages from the pragmas (capabilities.sizeOf 'pages'), or the
 * messages' bytes summed over the table (the total PostgreSQL's triggers keep
 * must equal it).
 */
export function measuredBytes(db: Database): number {
  if (db.capabilities.sizeOf === 'pages') {
    return (Number(db.pragma('page_count')) - Number(db.pragma('freelist_count'))) * Number(db.pragma('page_size'));
  }
  return db.get<{ n: number }>('SELECT COALESCE(sum(bytes), 0)::int8 AS n FROM messages')?.n ?? -1;
}

/**
 * Calls `addBatch(added)` (it adds rows numbered from `added` on and returns
 * how many) until `measure` exceeds `bytes`; returns how many rows were added.
 * The measure is the engine's capacity measure unless told: a budget is
 * filled by what the engine counts, pages or message bytes, never by a row
 * count that fits one engine only.
 */
export function fillPast(db: Database, bytes: number, addBatch: (added: number) => number, measure: () => number = () => usedBytes(db)): number {
  let added = 0;
  while (measure() <= bytes) added += addBatch(added);
  return added;
}

/**
 * Throws when the database or its text index is damaged: SQLite's
 * integrity_check of a file's pages (a server checks its own), then
 * indexIntegrity.
 */
export function databaseIntegrity(db: Database): void {
  if (db.capabilities.lockProtocol !== 'server') {
    const check = db.pragma('integrity_check');
    if (check !== 'ok') throw new Error(`integrity_check: ${String(check)}`);
  }
  indexIntegrity(db);
}
