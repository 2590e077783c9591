/**
 * Copying a bus from its SQLite file into an empty PostgreSQL database, the
 * core of `agentbus convert --to postgres URL` (issue 23, "Moving a bus").
 *
 * The source is read in one read transaction (one snapshot) and never
 * written; the target is written in one write transaction, so a copy that
 * fails part way leaves the target as empty as it found it. Rows keep their
 * keys: messages their seqs, memories their revisions, subscriptions their
 * cursors and pending batches, so every agent carries on where it was. What
 * the target's own triggers keep (counters, the capacity total, the text
 * index) is made by them as the rows arrive, not copied; the identity
 * sequence of seqs is moved to the source's highest seq ever handed out, so
 * no seq is handed out twice.
 *
 * Every table of the source is named below, copied or not and why: a table
 * a later migration adds fails the copy (and its test) until it is named.
 */
import type { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';
import type { SqlValue } from '../contract/driver.js';

/** The tables copied, in an order their foreign keys and triggers allow: known_names before sessions (whose insert trigger adds a name). */
const COPIED = [
  'channels',
  'known_names',
  'sessions',
  'session_sightings',
  'subscriptions',
  'expired_subscriptions',
  'messages',
  'embeddings',
  'direct_recipients',
  'receipts',
  'notices',
  'reservations',
  'reservation_takeovers',
] as const;

/** The source's tables that are not copied, each with the reason. */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  schema_migrations: "the target's own ledger, written by its migrations",
  channel_message_counts: "kept by the target's triggers as messages are inserted",
  memory_generation: "kept by the target's triggers as memory revisions are inserted",
  leases: 'held by running processes, and none may run during a copy',
  messages_fts: "SQLite's text index; the target indexes by its generated tsvector column",
};

/** Tables read in seq windows rather than whole: the ones that grow with the bus. */
const BY_SEQ: ReadonlySet<string> = new Set(['messages', 'embeddings', 'direct_recipients']);
const SEQ_WINDOW = 5_000;
/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMETERS = 60_000;
const MAX_ROWS_PER_INSERT = 500;

/** How far a copy got: rows of `table` copied so far of `total`. */
export interface CopyProgress {
  readonly table: string;
  readonly copied: number;
  readonly total: number;
}

export interface CopyResult {
  /** Rows copied per table, in copy order. */
  readonly tables: readonly { readonly table: string; readonly rows: number }[];
  /** The highest seq the source ever handed out; the target's next seq is above it. */
  readonly lastSeq: number;
}

/**
 * Copies every row of `source` (a SQLite bus at this agentbus's schema) into
 * `target` (a PostgreSQL bus just migrated, holding nothing yet). Throws
 * DbError `not_empty` when the target holds a bus, `sql` when the source has
 * a table this copy does not know; a failure part way rolls the target back.
 */
export function copyToPostgres(source: Database, target: Database, onProgress: (p: CopyProgress) => void = () => {}): CopyResult {
  return source.read(() => {
    checkTablesKnown(source);
    const totals = COPIED.map((table) => ({ table, total: countRows(source, table) }));
    return target.transaction(() => {
      requireEmpty(target);
      target.run('DELETE FROM channels');
      const tables = totals.map(({ table, total }) => ({ table, rows: copyTable(source, target, table, total, onProgress) }));
      const lastSeq = source.get<{ seq: number }>(source.capabilities.dialect.lastSeq)?.seq ?? 0;
      if (lastSeq > 0) target.get('SELECT setval(pg_get_serial_sequence(?, ?), ?)', ['messages', 'seq', lastSeq]);
      return { tables, lastSeq };
    });
  });
}

function checkTablesKnown(source: Database): void {
  // SQLite's own tables (sqlite_sequence, whose seq becomes the identity sequence; sqlite_stat*)
  // and the text index's shadow tables are the engine's, not the bus's.
  const names = source.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'messages\\_fts\\_%' ESCAPE '\\'");
  const unknown = names.map((r) => r.name).filter((n) => !(COPIED as readonly string[]).includes(n) && NOT_COPIED[n] === undefined);
  if (unknown.length > 0) {
    throw new DbError('sql', `the bus has tables this agentbus does not know how to copy (${unknown.join(', ')}); copy it with the agentbus that made them`);
  }
}

function countRows(db: Database, table: string): number {
  return db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)?.n ?? 0;
}

/** The target may hold only what its migrations wrote: the seeded channels and nothing else. */
function requireEmpty(target: Database): void {
  const held = COPIED.filter((t) => t !== 'channels').filter((t) => countRows(target, t) > 0);
  const channels = target.all<{ name: string }>("SELECT name FROM channels WHERE name NOT IN ('general', 'memory', '@direct')");
  if (held.length > 0 || channels.length > 0) {
    throw new DbError('not_empty', `the PostgreSQL database already holds a bus (rows in ${[...held, ...(channels.length > 0 ? ['channels'] : [])].join(', ')}); convert into a new empty database (createdb NAME)`);
  }
}

/** The columns both sides have, less the target's generated ones; a source column the target lacks is a schema mismatch. */
function sharedColumns(source: Database, target: Database, table: string): string[] {
  const from = source.all<{ name: string }>('SELECT name FROM pragma_table_info(?)', [table]).map((r) => r.name);
  const to = new Set(
    target.all<{ name: string }>("SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER'", [table]).map((r) => r.name),
  );
  const missing = from.filter((c) => !to.has(c));
  if (missing.length > 0) throw new DbError('sql', `the PostgreSQL schema has no column ${missing.map((c) => `${table}.${c}`).join(', ')}; both must be at the same schema version`);
  return from;
}

function copyTable(source: Database, target: Database, table: string, total: number, onProgress: (p: CopyProgress) => void): number {
  const columns = sharedColumns(source, target, table);
  const list = columns.join(', ');
  let copied = 0;
  const put = (rows: Record<string, SqlValue>[]): void => {
    insertRows(target, table, columns, rows);
    copied += rows.length;
    onProgress({ table, copied, total });
  };
  if (!BY_SEQ.has(table)) {
    put(source.all<Record<string, SqlValue>>(`SELECT ${list} FROM ${table}`));
    return copied;
  }
  const top = source.get<{ s: number | null }>(`SELECT max(seq) AS s FROM ${table}`)?.s ?? 0;
  for (let lo = 0; lo < top; lo += SEQ_WINDOW) {
    const rows = source.all<Record<string, SqlValue>>(`SELECT ${list} FROM ${table} WHERE seq > ? AND seq <= ? ORDER BY seq`, [lo, lo + SEQ_WINDOW]);
    if (rows.length > 0) put(rows);
  }
  return copied;
}

/** Multi-row INSERTs, as many rows per statement as the parameter limit allows (one round trip each). */
function insertRows(target: Database, table: string, columns: readonly string[], rows: readonly Record<string, SqlValue>[]): void {
  const perStatement = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / columns.length)));
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let at = 0; at < rows.length; at += perStatement) {
    const batch = rows.slice(at, at + perStatement);
    const params = batch.flatMap((row) => columns.map((c) => row[c] as SqlValue));
    target.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${batch.map(() => tuple).join(', ')}`, params);
  }
}
