/**
 * Forward-only schema migrations: `sql/NNNN_name.sql`, each applied in its own
 * write transaction and recorded with a SHA-256 checksum of the file. Every
 * check that can refuse a database runs before anything is written, so a
 * refused file stays byte-identical.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';
import type { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';
import type { DriverCapabilities } from '../contract/driver.js';
import { newerSchemaMessage } from './schema-messages.js';

export interface Migration {
  /** The number in the file name; versions are unique and applied in ascending order. */
  readonly version: number;
  /** The file name, e.g. `0001_schema.sql`. */
  readonly name: string;
  /** The whole SQL text, applied as written. */
  readonly sql: string;
  /** SHA-256 of the file's bytes, hex. */
  readonly checksum: string;
}

export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  readonly checksum: string;
}

/** What opening found and did, for status output and tests. */
export interface MigrationReport {
  /** The versions this call applied, ascending. */
  readonly applied: readonly number[];
  /** The schema version after this call. */
  readonly version: number;
  /** Path of the pre-upgrade backup, when one was written. */
  readonly backupPath: string | undefined;
}

const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The migrations directory shipped with the package (`sql/` at the package root). */
export function defaultMigrationsDir(): string {
  return join(packageRoot(), 'sql');
}

/** Reads and checks the migration files; throws DbError `migration_failed` on a bad directory. */
export function loadMigrations(dir: string): Migration[] {
  const migrations: Migration[] = [];
  const seen = new Set<number>();
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.sql')) continue;
    const match = FILE_PATTERN.exec(name);
    if (match === null) {
      throw new DbError('migration_failed', `migration file ${join(dir, name)} is not named NNNN_name.sql`);
    }
    const version = Number(match[1]);
    if (seen.has(version)) {
      throw new DbError('migration_failed', `two migration files in ${dir} share version ${version}`);
    }
    seen.add(version);
    const bytes = readFileSync(join(dir, name));
    migrations.push({
      version,
      name,
      sql: bytes.toString('utf8'),
      checksum: createHash('sha256').update(bytes).digest('hex'),
    });
  }
  return migrations;
}

/** The migrations recorded in the database, ascending; empty for a new database. */
export function appliedMigrations(db: Database<DriverCapabilities>): AppliedMigration[] {
  const ledger = db.get(db.capabilities.dialect.tableExists, ['schema_migrations']);
  if (ledger === undefined) return [];
  return db.all<AppliedMigration>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
}

/**
 * Compares the database's history with the files. Throws `schema_newer` when
 * the database knows versions the code does not, `migration_edited` when an
 * applied file changed or vanished, or history has a hole. Returns what is pending.
 * `backups` (the driver's capability) says which restore the refusal warns against.
 */
export function pendingMigrations(applied: readonly AppliedMigration[], migrations: readonly Migration[], backups: DriverCapabilities['backup'] = 'vacuum-into'): Migration[] {
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  const newest = migrations.at(-1)?.version ?? 0;
  for (const row of applied) {
    const file = byVersion.get(row.version);
    if (file === undefined) {
      if (row.version > newest) {
        throw new DbError('schema_newer', newerSchemaMessage(applied.at(-1)?.version ?? row.version, newest, backups));
      }
      throw new DbError(
        'migration_edited',
        `migration ${row.version} (${row.name}) is recorded in the database but its file is missing; restore the file from this release`,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new DbError(
        'migration_edited',
        `migration ${file.name} changed after it was applied (checksum differs); restore the original file and put the change in a new migration`,
      );
    }
  }
  const appliedVersions = new Set(applied.map((a) => a.version));
  const highestApplied = applied.at(-1)?.version ?? 0;
  const pending = migrations.filter((m) => !appliedVersions.has(m.version));
  const hole = pending.find((m) => m.version < highestApplied);
  if (hole !== undefined) {
    throw new DbError(
      'migration_edited',
      `migration ${hole.name} was never applied but a later one was; migrations must only be added after the newest`,
    );
  }
  return pending;
}

/**
 * Applies one migration in its own write transaction, re-checking inside the
 * transaction so that concurrent openers apply it exactly once.
 * Returns false when another process applied it first.
 */
export function applyMigration(db: Database<DriverCapabilities>, migration: Migration, now: number): boolean {
  try {
    return db.transaction(() => {
      db.exec(db.capabilities.dialect.createMigrationLedger);
      const done = db.get('SELECT 1 AS done FROM schema_migrations WHERE version = ?', [migration.version]);
      if (done !== undefined) return false;
      db.exec(migration.sql);
      db.run('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)', [
        migration.version,
        migration.name,
        migration.checksum,
        now,
      ]);
      return true;
    });
  } catch (error) {
    if (error instanceof DbError && error.code !== 'sql' && error.code !== 'constraint' && error.code !== 'error') {
      throw error;
    }
    throw new DbError(
      'migration_failed',
      `migration ${migration.name} failed and was rolled back: ${(error as Error).message}`,
      { error },
    );
  }
}
