/** PostgreSQL's spelling of what differs between engines (src/db/contract/dialect.ts). */
import type { Dialect } from '../../src/db/contract/dialect.js';

/**
 * The key of the bus's writer lock (pg_advisory_xact_lock): one writer at a
 * time, as in SQLite, so commits are serialized and seq order is commit
 * order. A constant: one database is one bus. (0x61676275 is "agbu".)
 */
export const WRITER_LOCK_KEY = 0x61676275;

export const POSTGRES_DIALECT: Dialect = {
  // READ COMMITTED after the lock: every statement sees every commit made before the lock was granted.
  beginWrite: `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(${WRITER_LOCK_KEY})`,
  beginRead: 'BEGIN ISOLATION LEVEL REPEATABLE READ',
  tableExists: 'SELECT 1 AS present FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?',
  // Times are milliseconds since the epoch: beyond PostgreSQL's 32-bit INTEGER.
  createMigrationLedger: `CREATE TABLE IF NOT EXISTS schema_migrations (
  version BIGINT PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`,
  // Relation sizes do not fall when rows are deleted (PostgreSQL reuses the space after VACUUM and
  // rarely gives it back), so eviction measured by them would never reach its target. Instead the
  // messages' bytes, summed: exact and falling at once, kept by triggers in one row
  // (sql/postgres/0013_message_bytes_total.sql), so a send reads one row, not the whole table.
  usedBytes: 'SELECT total AS used FROM message_bytes',
  // The identity's sequence (sql/postgres/0011_schema.sql). It is not transactional: a rolled-back
  // insert leaves a gap, as seqs may have anyway; commits stay in seq order under the writer lock.
  lastSeq: "SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS seq FROM messages_seq_seq",
  greatest: 'GREATEST',
  least: 'LEAST',
  limit: 'LIMIT ?',
  columnExists: 'SELECT 1 AS present FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?',
  // PostgreSQL keeps statistics (autovacuum's ANALYZE) and has no index hints.
  indexedBy: () => '',
  jsonIntegers: 'SELECT value::int8 FROM json_array_elements_text(?::json) AS value',
  jsonPairIn: (param, first, second) =>
    `EXISTS (SELECT 1 FROM json_array_elements(${param}::json) AS j(value) WHERE j.value->>0 = ${first} AND j.value->>1 = ${second})`,
};
