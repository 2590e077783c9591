/**
 * doctor's `schema` check: the database's schema beside this agentbus's, and
 * which side to upgrade. A newer schema is a problem (this agentbus's own
 * `agentbus mcp` refuses it: upgrade this agentbus); an older one is not
 * (the next `agentbus mcp` of this version upgrades it). Read without
 * upgrading or waiting, like every reading command.
 */
import { DbError } from '../../../db/contract/db-error.js';
import { olderSchemaNote } from '../../../db/open/schema-messages.js';
import { peekSchema } from '../../admin-database.js';
import type { Check } from './doctor-check.js';

/** The schema check for the agentbus database at `path` (call once its lock protocol and -wal are fine). */
export async function checkSchema(path: string): Promise<Check> {
  let schema;
  try {
    schema = await peekSchema(path);
  } catch (error) {
    // A newer schema or an edited migration: what opening would refuse, with what to do.
    if (error instanceof DbError && (error.code === 'schema_newer' || error.code === 'migration_edited')) return { name: 'schema', status: 'problem', message: error.message };
    // Anything else (a full disk, a file it cannot read) is another check's finding: doctor reports, it never dies of it.
    return { name: 'schema', status: 'warn', message: `not checked: ${(error as Error).message}` };
  }
  if (schema === undefined) {
    return { name: 'schema', status: 'warn', message: 'not checked: another agentbus process is creating, upgrading or converting the database right now; run doctor again in a moment' };
  }
  if (schema.pending.length > 0) return { name: 'schema', status: 'ok', message: olderSchemaNote(schema.version, schema.known) };
  return { name: 'schema', status: 'ok', message: `version ${schema.version}, the one this agentbus knows` };
}
