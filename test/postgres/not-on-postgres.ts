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
  { files: 'test/bus/change-waiter.test.ts', reason: 'pending: child-process fixtures on postgres (test/fixtures/*.js open the SQLite file of their data directory), and LISTEN/NOTIFY wake-ups' },
  { files: 'test/search/text-search-merge.test.ts', reason: 'SQLite file only: merging FTS5 index segments (postgres keeps a GIN index)' },
  { files: 'test/direct/direct-people-cli.test.ts', reason: 'pending: CLI commands (post, search, tail) on database_url' },
  { files: 'test/direct/direct-announce.test.ts', reason: 'pending: the push monitor and inbox files of a server on database_url (LISTEN/NOTIFY wake-ups)' },
  { files: 'test/memories/memory-processes.test.ts', reason: 'pending: child-process fixtures on postgres (test/fixtures/*.js open the SQLite file)' },
  { files: 'test/reservations/guard*.test.ts', reason: 'pending: the commit guard (`agentbus guard`) on database_url' },
  { files: 'test/reservations/status-reservations.test.ts', reason: 'pending: CLI commands (status) on database_url' },
  { files: 'test/reservations/takeover.test.ts', reason: 'pending: CLI commands (status, which shows the takeover) on database_url' },
  { files: 'test/maintenance/fts-merge.test.ts', reason: 'SQLite file only: merging FTS5 index segments, and a file made before migration 0002' },
  { files: 'test/maintenance/tick-statements.test.ts', reason: 'SQLite file only: the SQLite drivers\' statement cache' },
  { files: 'test/maintenance/capacity.test.ts', reason: 'pending: capacity tests on postgres (they size the budget in SQLite pages; postgres measures live envelope bytes)' },
  { files: 'test/maintenance/concurrent.test.ts', reason: 'pending: child-process fixtures on postgres (test/fixtures/*.js open the SQLite file)' },
  { files: 'test/maintenance/lease.test.ts', reason: 'pending: child-process fixtures on postgres (four OS processes racing for the lease)' },
  { files: 'test/maintenance/deadline.test.ts', reason: 'pending: the tick deadline\'s chunk sizes on postgres (a step resumes with other counts)' },
  { files: 'test/maintenance/retention.test.ts', reason: 'pending: retention\'s chunked eviction counts on postgres' },
  { files: 'test/maintenance/reset.test.ts', reason: 'pending: resetDatabase on postgres (it wipes the FTS5 tables by name)' },
  { files: 'test/maintenance/tombstones.test.ts', reason: 'pending: tombstone purge tests on postgres (they read the FTS5 index rows)' },
  { files: 'test/mcp/json-rpc-unopenable.test.ts', reason: 'SQLite file only: a database file the server cannot open (postgres\'s start-up failures: test/postgres/mcp-start-up.test.ts)' },
  { files: 'test/mcp/channel-push.test.ts', reason: 'pending: channel push of a server on database_url (LISTEN/NOTIFY wake-ups)' },
  { files: 'test/mcp/clock-jumps.test.ts', reason: 'pending: channel push of a server on database_url (LISTEN/NOTIFY wake-ups)' },
  { files: 'test/mcp/inbox-monitor*.test.ts', reason: 'pending: the inbox monitor of a server on database_url (LISTEN/NOTIFY wake-ups)' },
  { files: 'test/cli/**', reason: 'pending: CLI commands (status, doctor, tail, post, search, memory, reset, backup, convert) on database_url' },
  { files: 'test/web/**', reason: 'pending: the web console on database_url' },
  { files: 'test/harness/inbox-command.test.ts', reason: 'pending: CLI commands (`agentbus inbox`) on database_url' },
  { files: 'test/install/**', reason: 'pending: CLI commands (install, guard, status) on database_url' },
  { files: 'test/storage/**', reason: 'SQLite file only: a damaged, emptied, lost, full, read-only or shared database file, the WAL size limit; `doctor` on database_url is pending' },
  { files: 'test/package/**', reason: 'pending: the packed package on database_url (this project\'s set-up does not pack it: inject(\'packedInstall\'))' },
];
