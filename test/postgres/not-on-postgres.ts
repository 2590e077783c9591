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
  { files: 'test/search/text-search-tokens.test.ts', reason: 'pending: text search folding diacritics and splitting words as FTS5 unicode61 does (postgres\'s simple parser keeps accents)' },
  { files: 'test/search/text-search-hostile.test.ts', reason: 'pending: text search folding diacritics (`naive cafe` finding `naïve café`) on postgres' },
];
