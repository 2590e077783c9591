/**
 * doctor's `schema` check on a server: the migrations recorded in the
 * database beside those of sql/postgres/, judged as `agentbus mcp` judges
 * them (src/db/open/schema-compatibility.ts) but never applied: none yet
 * (the first `agentbus mcp` makes the schema), older (the next one upgrades
 * it), current, or newer and refused (upgrade this agentbus).
 */
import type { Database } from '../../../db/contract/database.js';
import type { DriverCapabilities } from '../../../db/contract/driver.js';
import { compareSchema, type SchemaComparison } from '../../../db/open/schema-compatibility.js';
import { olderSchemaNote } from '../../../db/open/schema-messages.js';
import { checkOfError, type Check } from './doctor-check.js';

export interface ServerSchemaCheck {
  /** The `schema` line. */
  readonly check: Check;
  /** The comparison, when it could be made: what the privileges check needs to know of pending migrations. */
  readonly comparison: SchemaComparison | undefined;
}

/** The schema check against the migrations in `migrationsDir` (the package's sql/postgres/). */
export function checkServerSchema(db: Database<DriverCapabilities>, migrationsDir: string): ServerSchemaCheck {
  let comparison: SchemaComparison;
  try {
    comparison = compareSchema(db, migrationsDir);
  } catch (error) {
    // schema_newer or migration_edited (what the server's start-up refuses, with what to do), or a privilege it lacks.
    return { check: checkOfError('schema', error), comparison: undefined };
  }
  const { version, known, pending } = comparison;
  let message: string;
  if (version === 0) message = `no bus in this database yet: the first \`agentbus mcp\` creates its schema (version ${known})`;
  else if (pending.length > 0) message = olderSchemaNote(version, known, false);
  else message = `version ${version}, the one this agentbus knows`;
  return { check: { name: 'schema', status: 'ok', message }, comparison };
}
