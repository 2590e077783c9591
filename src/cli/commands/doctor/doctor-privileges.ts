/**
 * doctor's `privileges` check on a server: whether the role of database_url
 * may do what the bus does, asked of PostgreSQL's own privilege functions
 * (has_table_privilege and its kin), so nothing is run, locked or written:
 * - USAGE on its schema (the first of the search_path that exists);
 * - SELECT, INSERT, UPDATE and DELETE on every bus table, SELECT on their
 *   sequences (the bus reads the messages' seq sequence);
 * - with no schema yet or migrations pending, CREATE on the schema, and for
 *   an upgrade the ownership of the tables the migrations alter.
 * A missing privilege is a problem naming the GRANT that gives it.
 */
import type { Database } from '../../../db/contract/database.js';
import type { DriverCapabilities } from '../../../db/contract/driver.js';
import type { Migration } from '../../../db/open/migrations.js';
import type { SchemaComparison } from '../../../db/open/schema-compatibility.js';
import { checkOfError, type Check } from './doctor-check.js';

/** The migrations' ledger, made by the dialect's createMigrationLedger rather than by a migration file. */
const LEDGER_TABLE = 'schema_migrations';

/** The privileges each bus table needs. */
const TABLE_PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;

/** How every fix begins: only the database's owner (or a superuser) may grant. */
const AS_OWNER = "as the database's owner, run";

/** How many tables a message names before "and N more". */
const NAMED_AT_MOST = 4;

/** The role and the schema the bus's tables go in; each privilege 1 when held, null without a schema. */
interface SchemaRow {
  /** current_user. */
  readonly role: string;
  /** current_schema(): the first schema of the search_path that exists; null when none does. */
  readonly schema: string | null;
  /** The search_path as set, for the message when no schema of it exists. */
  readonly path: string;
  /** USAGE on the schema. */
  readonly usage: number | null;
  /** CREATE on the schema. */
  readonly creates: number | null;
}

/** A table of the schema, with the role's privileges on it (each 1 when held). */
interface TableRow {
  /** The table's name. */
  readonly name: string;
  /** The role that owns it. */
  readonly owner: string;
  /** 1 when the role is the owner or a member of the owning role. */
  readonly owned: number;
  /** SELECT. */
  readonly can_select: number;
  /** INSERT. */
  readonly can_insert: number;
  /** UPDATE. */
  readonly can_update: number;
  /** DELETE. */
  readonly can_delete: number;
}

/** A sequence of a table's column (an identity), with the role's SELECT on it. */
interface SequenceRow {
  /** The sequence's name. */
  readonly name: string;
  /** The table whose column the sequence belongs to. */
  readonly of_table: string;
  /** 1 when the role may read it. */
  readonly can_select: number;
}

const SCHEMA_SQL =
  "SELECT current_user AS role, current_schema() AS schema, current_setting('search_path') AS path, " +
  "has_schema_privilege(current_schema(), 'USAGE') AS usage, has_schema_privilege(current_schema(), 'CREATE') AS creates";

const TABLES_SQL = `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner, pg_has_role(c.relowner, 'USAGE') AS owned,
  has_table_privilege(c.oid, 'SELECT') AS can_select, has_table_privilege(c.oid, 'INSERT') AS can_insert,
  has_table_privilege(c.oid, 'UPDATE') AS can_update, has_table_privilege(c.oid, 'DELETE') AS can_delete
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`;

const SEQUENCES_SQL = `SELECT s.relname AS name, t.relname AS of_table, has_sequence_privilege(s.oid, 'SELECT') AS can_select
FROM pg_catalog.pg_class s JOIN pg_catalog.pg_namespace n ON n.oid = s.relnamespace
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = s.oid AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
WHERE n.nspname = current_schema() AND s.relkind = 'S'`;

/** The tables the bus's migrations create, and the ledger. */
export function busTables(migrations: readonly Migration[]): Set<string> {
  const tables = new Set([LEDGER_TABLE]);
  for (const migration of migrations) {
    for (const match of migration.sql.matchAll(/\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)/gi)) {
      tables.add((match[1] as string).toLowerCase());
    }
  }
  return tables;
}

/** `name` as an SQL identifier, quoted unless it needs no quotes. */
function identifier(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** `names`, at most NAMED_AT_MOST of them, then how many more. */
function named(names: readonly string[]): string {
  const shown = names.slice(0, NAMED_AT_MOST).join(', ');
  return names.length > NAMED_AT_MOST ? `${shown} and ${names.length - NAMED_AT_MOST} more` : shown;
}

/** What one existing bus table lacks, as `messages (INSERT, DELETE)`; undefined when nothing. */
function tableLack(row: TableRow): string | undefined {
  const has = { SELECT: row.can_select, INSERT: row.can_insert, UPDATE: row.can_update, DELETE: row.can_delete };
  const missing = TABLE_PRIVILEGES.filter((p) => has[p] !== 1);
  return missing.length === 0 ? undefined : `${row.name} (${missing.join(', ')})`;
}

/** Whether the schema will be created or migrated: the first or the next `agentbus mcp` runs migrations. */
function migrating(comparison: SchemaComparison | undefined): 'create' | 'upgrade' | undefined {
  if (comparison === undefined) return undefined;
  if (comparison.version === 0) return 'create';
  return comparison.pending.length > 0 ? 'upgrade' : undefined;
}

/** The findings (each what is missing and the fix) about the tables and sequences of `schema`. */
function tableFindings(tables: readonly TableRow[], sequences: readonly SequenceRow[], schema: string, role: string, upgrading: boolean): string[] {
  const findings: string[] = [];
  const lacking = tables.map(tableLack).filter((lack): lack is string => lack !== undefined);
  if (lacking.length > 0) {
    findings.push(`role ${role} lacks ${named(lacking)}: ${AS_OWNER} GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  }
  const sequencesLacking = sequences.filter((s) => s.can_select !== 1).map((s) => s.name);
  if (sequencesLacking.length > 0) {
    findings.push(`role ${role} may not read the sequence ${named(sequencesLacking)}: ${AS_OWNER} GRANT SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`);
  }
  const foreign = upgrading ? tables.filter((t) => t.owned !== 1) : [];
  if (foreign.length > 0) {
    const owner = identifier(foreign[0]?.owner ?? '');
    findings.push(
      `the pending migrations alter the bus's tables, which only their owner may, and ${named(foreign.map((t) => `${t.name} (owner ${t.owner})`))} are not role ${role}'s: ` +
        `start the next \`agentbus mcp\` with a database_url naming ${owner}, or have a superuser run GRANT ${owner} TO ${role}`,
    );
  }
  return findings;
}

/** What the role may do, when it may do all the bus needs. */
function privilegesOk(role: string, schema: string, tables: number, mode: 'create' | 'upgrade' | undefined): string {
  if (mode === 'create') return `role ${role} may create the bus's tables in schema ${schema}, as the first \`agentbus mcp\` will`;
  const upgrade = mode === 'upgrade' ? ', and may create and alter what the pending migrations need' : '';
  return `role ${role} may read and write the ${tables} bus tables in schema ${schema}${upgrade}`;
}

/** The privileges check; `comparison` is the schema check's (undefined when it could not compare), `migrations` the package's. */
export function checkPrivileges(db: Database<DriverCapabilities>, comparison: SchemaComparison | undefined, migrations: readonly Migration[]): Check {
  try {
    const at = db.get<SchemaRow>(SCHEMA_SQL);
    if (at === undefined) throw new Error('the server answered no row about the current schema');
    const role = identifier(at.role);
    if (at.schema === null) {
      const message = `no schema on role ${role}'s search_path (${at.path}) exists, so agentbus has nowhere to put its tables: ${AS_OWNER} CREATE SCHEMA agentbus AUTHORIZATION ${role}, then ALTER ROLE ${role} SET search_path = agentbus`;
      return { name: 'privileges', status: 'problem', message };
    }
    const schema = identifier(at.schema);
    const mode = migrating(comparison);
    const findings: string[] = [];
    if (at.usage !== 1) findings.push(`role ${role} may not use schema ${schema}: ${AS_OWNER} GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    if (mode !== undefined && at.creates !== 1) {
      const when = mode === 'create' ? 'the first `agentbus mcp` creates the bus' : 'the next `agentbus mcp` upgrades the bus';
      findings.push(`${when} in schema ${schema}, where role ${role} may not create anything: ${AS_OWNER} GRANT CREATE ON SCHEMA ${schema} TO ${role}, or connect as the database's owner`);
    }
    const bus = busTables(migrations);
    const tables = db.all<TableRow>(TABLES_SQL).filter((t) => bus.has(t.name));
    const sequences = db.all<SequenceRow>(SEQUENCES_SQL).filter((s) => bus.has(s.of_table));
    findings.push(...tableFindings(tables, sequences, schema, role, mode === 'upgrade'));
    if (findings.length > 0) return { name: 'privileges', status: 'problem', code: 'permission', message: findings.join('; ') };
    return { name: 'privileges', status: 'ok', message: privilegesOk(role, schema, tables.length, mode) };
  } catch (error) {
    return checkOfError('privileges', error);
  }
}
