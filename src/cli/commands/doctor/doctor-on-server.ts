/**
 * `agentbus doctor` on a bus whose database_url names a PostgreSQL server:
 * the URL, the server, the schema, the role's privileges and wake-ups,
 * each as `agentbus mcp` would find it, after connecting without migrating
 * (src/db/open/open-postgres.ts, connectPostgres): doctor never creates or
 * upgrades the schema. A check the server must answer runs only once it
 * answered. The file checks are left out: they look at the SQLite file in
 * the data directory, which a bus on a server does not use.
 */
import type { CliIo } from '../../cli-io.js';
import { loadMigrations } from '../../../db/open/migrations.js';
import { checkOfError, type Check } from './doctor-check.js';
import { checkDatabaseUrl, type ServerConfig } from './doctor-database-url.js';
import { checkPrivileges } from './doctor-privileges.js';
import { checkServer } from './doctor-server.js';
import { checkServerSchema } from './doctor-server-schema.js';
import { checkWakeups } from './doctor-wakeups.js';

/** How long a statement may wait on a lock, and one call on the server's answer. */
const BUSY_TIMEOUT_MS = 5_000;
const DEADLINE_MS = 10_000;

/** The checks of a bus on a server that the SQLite file's checks give way to. */
export const FILE_CHECKS = ['file_system', 'disk', 'database', 'lock_protocol', 'wal', 'integrity', 'stale_locks', 'shared_files'] as const;

/** Why FILE_CHECKS are left out, for the report. */
export const FILE_CHECKS_LEFT_OUT = 'the bus is on the PostgreSQL server of database_url, not in a SQLite file in the data directory (so --full and --fix have nothing to do either)';

/** The checks of a bus on a server, after config and data_directory. */
export const SERVER_CHECKS = ['database_url', 'server', 'schema', 'privileges', 'wakeups'] as const;

/** Why no check of the bus runs when AGENTBUS_DATABASE_URL is set but the config cannot be read. */
export const SERVER_CHECKS_WAIT_FOR_CONFIG =
  'AGENTBUS_DATABASE_URL names a PostgreSQL server, and the config (which may hold its password settings) must be valid before doctor can check it: fix the config problem, then run doctor again';

/** The database_url, server, schema, privileges and wakeups checks, as far as they got. */
export async function serverChecks(io: CliIo, config: ServerConfig): Promise<Check[]> {
  const url = checkDatabaseUrl(config, io.env);
  if (url.connectWith === undefined) return [url.check];
  const checks = [url.check];
  // A file of its own in the bundle (scripts/build.js, ON_DEMAND), as for `agentbus mcp`.
  const { connectPostgres, postgresMigrationsDir } = await import('../../../db/open/open-postgres.js');
  let db;
  try {
    db = await connectPostgres({ url: url.connectWith, busyTimeoutMs: BUSY_TIMEOUT_MS, deadlineMs: DEADLINE_MS });
  } catch (error) {
    return [...checks, checkOfError('server', error)];
  }
  try {
    const server = checkServer(db);
    checks.push(server.check);
    if (!server.answered) return checks;
    const dir = postgresMigrationsDir();
    const schema = checkServerSchema(db, dir);
    checks.push(schema.check, checkPrivileges(db, schema.comparison, loadMigrations(dir)));
    checks.push(await checkWakeups(db));
    return checks;
  } finally {
    db.close();
  }
}
