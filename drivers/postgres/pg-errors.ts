/**
 * PostgreSQL's failures as the storage layer's codes (db-error.ts), with a
 * sentence that names the fix where a person must act. SQLSTATE classes:
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
import type { BridgeFailure } from './bridge-protocol.js';

/** Network errors of the socket: the server is not reachable (now). */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

interface PgErrorLike {
  readonly message?: string;
  /** SQLSTATE for a server error; errno name (ECONNREFUSED) for a socket error. */
  readonly code?: string;
}

/** The failure for an error thrown by `pg`; `where` names the server (URL without password). */
export function pgFailure(error: unknown, where: string): BridgeFailure {
  const e = (error ?? {}) as PgErrorLike;
  const message = String(e.message ?? error);
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code === undefined || !/^[0-9A-Z]{5}$/.test(code)) {
    if (code !== undefined && NETWORK_ERRORS.has(code)) {
      return { code: 'unavailable', message: `cannot reach the PostgreSQL server ${where} (${code}): check that it runs, that the host and port in database_url are its own, and that this machine may connect`, sqlState: undefined };
    }
    return { code: 'unavailable', message: notPostgresSentence(message, where), sqlState: undefined };
  }
  return { code: codeOf(code), message: sentenceOf(code, message, where), sqlState: code };
}

function codeOf(state: string): BridgeFailure['code'] {
  switch (state) {
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification
    case '42501': // insufficient_privilege
      return 'permission';
    case '3D000': // invalid_catalog_name: no such database
      return 'cantopen';
    case '53100': // disk_full
      return 'full';
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
    case '55P03': // lock_not_available (lock_timeout)
    case '57014': // query_canceled (statement_timeout)
      return 'busy';
    case '22021': // character_not_in_repertoire (U+0000)
      return 'bind';
    case '25006': // read_only_sql_transaction (a standby)
      return 'readonly';
    case 'XX001': // data_corrupted
    case 'XX002': // index_corrupted
      return 'corrupt';
    default:
      break;
  }
  switch (state.slice(0, 2)) {
    case '23': // integrity_constraint_violation
      return 'constraint';
    case '42': // syntax_error_or_access_rule_violation
    case '22': // data_exception
      return 'sql';
    case '08': // connection_exception
    case '57': // operator_intervention: admin_shutdown, crash_shutdown, cannot_connect_now
    case '53': // insufficient_resources: too many connections
      return 'unavailable';
    default:
      return 'error';
  }
}

function sentenceOf(state: string, message: string, where: string): string {
  switch (state) {
    case '28P01':
    case '28000':
      return `the PostgreSQL server ${where} refused the login (${message}): check the user and password in database_url (or its password file, or AGENTBUS_DATABASE_PASSWORD)`;
    case '42501':
      return privilegeSentence(message, where);
    case '3D000':
      return `the PostgreSQL server ${where} has no such database (${message}): create it (\`createdb\`) or fix the database name in database_url`;
    case '3F000': // invalid_schema_name: no schema of the search_path exists
      return `no schema of the search_path of database_url's role exists on ${where} (${message}): create one (CREATE SCHEMA) or set the role's search_path to one that exists (\`agentbus doctor\` says which)`;
    default:
      return message;
  }
}

/**
 * A socket that closed or stayed silent before the server's first answer:
 * what a program other than PostgreSQL on that port (a web server, ssh) does,
 * as well as a server too slow to answer.
 */
function notPostgresSentence(message: string, where: string): string {
  return (
    `the connection to the PostgreSQL server ${where} failed before it answered (${message}): ` +
    'check that the host and port in database_url name a PostgreSQL server (another program may listen on that port) and that it is reachable from here'
  );
}

/** The role in `where` (a URL without its password), quoted for SQL; a placeholder when it names none. */
function roleOf(where: string): string {
  try {
    const name = decodeURIComponent(new URL(where).username);
    return name === '' ? 'the role of database_url' : `"${name.replaceAll('"', '""')}"`;
  } catch {
    return 'the role of database_url';
  }
}

/** The GRANT that gives `role` what PostgreSQL said it lacks (`permission denied for table x`, `... for schema public`). */
function grantFor(message: string, role: string): string {
  const denied = /permission denied for (table|relation|sequence|schema|database) "?([^"\s]+)"?/.exec(message);
  switch (denied?.[1]) {
    case 'table':
    case 'relation':
      return `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role} (naming the bus's schema if it is not public)`;
    case 'sequence':
      return `GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role} (naming the bus's schema if it is not public)`;
    case 'schema':
      return `GRANT USAGE, CREATE ON SCHEMA ${denied[2]} TO ${role}`;
    case 'database':
      return `GRANT CONNECT ON DATABASE ${denied[2]} TO ${role}`;
    default:
      return `GRANT CREATE ON SCHEMA public TO ${role}, so agentbus can create its tables`;
  }
}

/** insufficient_privilege, with the GRANT that fixes it for the role of `where`. */
function privilegeSentence(message: string, where: string): string {
  return `the PostgreSQL role of database_url lacks a privilege (${message}): as the database's owner, run ${grantFor(message, roleOf(where))}; or connect as the database's owner (\`agentbus doctor\` lists what is missing)`;
}
