/**
 * The SQL that differs between engines, one object per engine (in the spirit
 * of Kysely's DialectAdapter). Core takes these texts from the connection's
 * capabilities instead of writing an engine's spelling itself, and never
 * asks which driver it runs on.
 */
export interface Dialect {
  /** Opens a write transaction that holds the one writer lock from its first statement on, so commits are serialized (seq order is commit order). */
  readonly beginWrite: string;
  /** Opens a read transaction: every statement inside sees one snapshot. */
  readonly beginRead: string;
  /** A query with one `?` parameter, a table name, returning a row exactly when that table exists. */
  readonly tableExists: string;
  /** Creates the migrations ledger (version, name, checksum, applied_at in ms) if it is missing. */
  readonly createMigrationLedger: string;
  /** A query returning one row `used`: the bytes live data occupies now, falling as soon as rows are deleted (the capacity budget's measure). */
  readonly usedBytes: string;
  /** A query returning at most one row `seq`: the highest message seq ever handed out (none or 0 before the first); never decreases, even after deletes. */
  readonly lastSeq: string;
  /** The scalar function for the larger of two values (`max(a, b)` in SQLite; `max` is only an aggregate elsewhere). */
  readonly greatest: 'max' | 'GREATEST';
  /** The scalar function for the smaller of two values (`min(a, b)` in SQLite; `min` is only an aggregate elsewhere). */
  readonly least: 'min' | 'LEAST';
  /**
   * `LIMIT` with its count bound as the next `?`. SQLite's is `LIMIT ?+0`: node:sqlite's SQLite
   * (3.51) runs a statement with a bare `LIMIT ?` about 20 µs slower each time it is bound again
   * (the same plan; it is prepared anew), which was a third of a receive (docs/performance.md).
   */
  readonly limit: string;
  /** A query with two `?` parameters, a table and a column name, returning a row exactly when that table has that column (readers of older schemas probe with it). */
  readonly columnExists: string;
  /** The hint after a table name that makes the planner use `index` (SQLite without statistics needs it; a planner with statistics gets none). */
  indexedBy(index: string): string;
  /** A subquery for `IN (...)`: the integers of the JSON array text given as its one `?` parameter. */
  readonly jsonIntegers: string;
  /** A condition: the values `first` and `second` are one of the [x, y] pairs of the JSON array text bound as the named parameter `param` (`:name`). */
  jsonPairIn(param: string, first: string, second: string): string;
}

/** SQLite's spelling (both SQLite drivers). */
export const SQLITE_DIALECT: Dialect = {
  beginWrite: 'BEGIN IMMEDIATE',
  beginRead: 'BEGIN DEFERRED',
  tableExists: "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?",
  createMigrationLedger: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at INTEGER NOT NULL
)`,
  // Pages in use: deleted rows free pages to the freelist at once, before any vacuum.
  usedBytes:
    'SELECT (p.page_count - f.freelist_count) * s.page_size AS used FROM pragma_page_count() AS p, pragma_freelist_count() AS f, pragma_page_size() AS s',
  // AUTOINCREMENT's record of the highest rowid ever used.
  lastSeq: "SELECT seq FROM sqlite_sequence WHERE name = 'messages'",
  greatest: 'max',
  least: 'min',
  limit: 'LIMIT ?+0',
  columnExists: 'SELECT 1 AS present FROM pragma_table_info(?) WHERE name = ?',
  indexedBy: (index) => `INDEXED BY ${index}`,
  jsonIntegers: 'SELECT value FROM json_each(?)',
  jsonPairIn: (param, first, second) =>
    `EXISTS (SELECT 1 FROM json_each(${param}) j WHERE json_extract(j.value, '$[0]') = ${first} AND json_extract(j.value, '$[1]') = ${second})`,
};
