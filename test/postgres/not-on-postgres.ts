/**
 * The test files the postgres project does not run (vitest.config.ts), in one
 * place, each with its reason:
 * - "SQLite file only": they test what only a database file has (its header,
 *   locks, WAL, -shm, backups, the file drivers' own contract); they have no
 *   meaning on a server.
 * - "pending: <what>": the feature is not done on postgres yet. This part is
 *   the to-do list of issue 23; an entry goes when its feature works there.
 */
export interface NotOnPostgres {
  /** A glob of test files, relative to the repository. */
  readonly files: string;
  /** Why they do not run on postgres. */
  readonly reason: string;
}

export const NOT_ON_POSTGRES: readonly NotOnPostgres[] = [
  { files: 'test/native/**', reason: 'SQLite file only: the native driver\'s internals' },
  { files: 'test/wasm/**', reason: 'SQLite file only: the wasm driver\'s file layer and locks' },
  { files: 'test/driver/**', reason: 'SQLite file only: the file drivers\' contract, opening, locks, WAL and pragmas (postgres has its own: test/postgres/)' },
  { files: 'test/bus/channel-message-counts-migration.test.ts', reason: 'SQLite file only: migrating a file made before 0011 (a PostgreSQL schema starts at 0011)' },
  { files: 'test/bus/session-upgrade.test.ts', reason: 'SQLite file only: migration 0007 on a file made before it (a PostgreSQL schema starts at 0011)' },
  { files: 'test/bus/mixed-versions.test.ts', reason: 'SQLite file only: an older agentbus release beside this one, and older releases have no postgres driver' },
  { files: 'test/search/text-search-merge.test.ts', reason: 'SQLite file only: merging FTS5 index segments (postgres keeps a GIN index)' },
  { files: 'test/reservations/guard-broken.test.ts', reason: 'SQLite file only: the guard beside a missing, foreign, damaged or locked database file (on a server: test/postgres/cli-on-server.test.ts)' },
  { files: 'test/maintenance/fts-merge.test.ts', reason: 'SQLite file only: merging FTS5 index segments, and a file made before migration 0002' },
  { files: 'test/maintenance/tick-statements.test.ts', reason: 'SQLite file only: the SQLite drivers\' statement cache' },
  { files: 'test/mcp/json-rpc-unopenable.test.ts', reason: 'SQLite file only: a database file the server cannot open (postgres\'s start-up failures: test/postgres/mcp-start-up.test.ts)' },
  { files: 'test/cli/backup.test.ts', reason: 'SQLite file only: `agentbus backup` copies the file (on a server it refuses and names pg_dump: test/postgres/cli-on-server.test.ts)' },
  { files: 'test/cli/restore.test.ts', reason: 'SQLite file only: `agentbus restore` puts a backup file in place (on a server it refuses and names pg_restore)' },
  { files: 'test/cli/convert.test.ts', reason: 'SQLite file only: converting a file between lock protocols (to a server: test/postgres/convert-command.test.ts)' },
  { files: 'test/cli/status-file.test.ts', reason: 'SQLite file only: status before the file exists and with a driver setting that cannot open it' },
  { files: 'test/cli/doctor.test.ts', reason: 'SQLite file only: doctor\'s checks of the file, its locks and WAL (on a server: test/postgres/doctor-postgres.test.ts)' },
  { files: 'test/cli/schema-versions.test.ts', reason: 'SQLite file only: an older agent\'s file left as it is by reading commands (on a server: test/postgres/cli-on-server.test.ts)' },
  { files: 'test/storage/**', reason: 'SQLite file only: a damaged, emptied, lost, full, read-only or shared database file, the WAL size limit (doctor on a server: test/postgres/doctor-postgres.test.ts)' },
];
