/**
 * How the database's schema relates to the one this agentbus knows
 * (what a person is told about it: schema-messages.ts).
 *
 * Versions of agentbus share a file while they run: an `agentbus mcp` of a
 * newer version upgrades the schema under running older agents, who keep
 * working; an older agentbus that starts afterwards refuses the newer schema.
 * So only `agentbus mcp` (and commands that write, such as `post`) upgrade;
 * commands that only read never do, or every older agent that restarts would
 * be refused because someone ran `agentbus status`.
 */
import type { Database } from '../contract/database.js';
import { appliedMigrations, defaultMigrationsDir, loadMigrations, pendingMigrations, type Migration } from './migrations.js';

/** The database's schema beside this agentbus's. */
export interface SchemaComparison {
  /** The newest migration applied to the database; 0 for one never migrated. */
  readonly version: number;
  /** The newest migration this agentbus has. */
  readonly known: number;
  /** Migrations this agentbus would apply, ascending; empty when the schema is current. */
  readonly pending: readonly Migration[];
}

/**
 * Compares the database's migration history with this agentbus's files.
 * Throws DbError `schema_newer` or `migration_edited` as opening would.
 */
export function compareSchema(db: Database, migrationsDir = defaultMigrationsDir()): SchemaComparison {
  const migrations = loadMigrations(migrationsDir);
  const applied = appliedMigrations(db);
  const pending = pendingMigrations(applied, migrations, db.capabilities.backup);
  return { version: applied.at(-1)?.version ?? 0, known: migrations.at(-1)?.version ?? 0, pending };
}
