/**
 * doctor's `server` check: the first round trip to the PostgreSQL server of
 * database_url, which is where `agentbus mcp` fails too (a wrong password,
 * nothing listening, a program that is not PostgreSQL, a server older than
 * the oldest agentbus supports: the driver's own sentences,
 * drivers/postgres/pg-errors.ts), and what the server is. A standby is a
 * problem: the bus writes on every call.
 */
import type { Database } from '../../../db/contract/database.js';
import type { DriverCapabilities } from '../../../db/contract/driver.js';
import { checkOfError, type Check } from './doctor-check.js';

/** What the server says of itself. */
interface ServerRow {
  /** server_version_num, e.g. 150004. */
  readonly num: number;
  /** server_version, e.g. `15.4 (Debian 15.4-1)`. */
  readonly version: string;
  /** The role connected (current_user). */
  readonly role: string;
  /** The database connected to. */
  readonly database: string;
  /** 1 on a standby (in recovery). */
  readonly standby: number;
}

const SERVER_SQL =
  "SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version, " +
  'current_user AS role, current_database() AS database, pg_is_in_recovery() AS standby';

export interface ServerCheck {
  /** The `server` line. */
  readonly check: Check;
  /** True when the server answered: the checks that ask it more can run. */
  readonly answered: boolean;
}

export function checkServer(db: Database<DriverCapabilities>): ServerCheck {
  let row: ServerRow | undefined;
  try {
    row = db.get<ServerRow>(SERVER_SQL);
  } catch (error) {
    return { check: checkOfError('server', error), answered: false };
  }
  if (row === undefined) return { check: { name: 'server', status: 'problem', message: `${db.path} answered no row to SELECT current_setting('server_version')` }, answered: false };
  const what = `PostgreSQL ${row.version} (server_version_num ${row.num}), database ${row.database}, role ${row.role}`;
  if (row.standby === 1) {
    const message = `${what} is a standby (in recovery, read-only), and agentbus writes on every call: point database_url at the primary`;
    return { check: { name: 'server', status: 'problem', code: 'readonly', message }, answered: true };
  }
  return { check: { name: 'server', status: 'ok', message: what }, answered: true };
}
