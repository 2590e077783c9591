/**
 * `agentbus doctor` on a bus whose database_url names a PostgreSQL server
 * (src/cli/commands/doctor/doctor-on-server.ts), run as a real process
 * against the project's cluster: the URL, the server, the schema, the
 * role's privileges and a LISTEN/NOTIFY round trip instead of the file
 * checks; each failure a person must fix (a malformed URL, a readable
 * password file, a wrong password, nothing listening, a program that is not
 * PostgreSQL, a newer schema, a role without privileges) a problem with the
 * storage layer's code, as `agentbus mcp`'s start-up would meet it; doctor
 * never creates or upgrades the schema, and never prints a password.
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { DbError } from '../../src/db/contract/db-error.js';
import type { DriverCapabilities } from '../../src/db/contract/driver.js';
import type { Check } from '../../src/cli/commands/doctor/doctor-check.js';
import { openPostgresBus, openPostgresDatabase, postgresMigrationsDir } from '../../src/db/open/open-postgres.js';
import { jsonOf, prepareCliDir, runCli, type CliRun } from '../cli/cli-process.js';
import { doctorCheck, doctorReport } from '../support/doctor-report.js';
import { expectError } from '../support/expect-error.js';
import { startMcp } from '../support/mcp-process.js';
import { testDatabaseUrl } from '../support/test-databases.js';
import { tempDir } from '../support/test-driver.js';
import { TEST_PASSWORD } from './global-setup.js';
import { closeAfterTest, connectPg, freshDatabase, withDatabase } from './pg-test.js';

/** The checks of a bus on a server, in their order. */
const SERVER_CHECKS = ['config', 'data_directory', 'database_url', 'server', 'schema', 'privileges', 'wakeups'];

/** The password of the roles the tests make. */
const ROLE_PASSWORD = 'limited role secret';

/** Every password a doctor run could leak, as written and as a URL's user part or a parameter spells it: none may appear in anything it prints. */
const SECRETS = [TEST_PASSWORD, ROLE_PASSWORD, 's3cret', 'wrong-password'].flatMap((p) => [p, encodeURIComponent(p), new URLSearchParams({ p }).toString().slice(2)]);

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

interface DoctorRun {
  /** The process's exit code and output. */
  readonly run: CliRun;
  /** Its --json report (a text run: no checks). */
  readonly report: ReturnType<typeof doctorReport>;
}

/** `agentbus doctor --json` (or text) with AGENTBUS_DATABASE_URL=`url`, in a data directory of its own; fails when it prints a password. */
async function doctor(url: string, options: { config?: Record<string, unknown>; text?: boolean } = {}): Promise<DoctorRun> {
  const dir = tempDir();
  prepareCliDir(dir, options.config === undefined ? {} : { config: options.config });
  const args = options.text ? ['doctor'] : ['doctor', '--json'];
  const run = await runCli(dir, args, { env: { AGENTBUS_DRIVER: '', AGENTBUS_DATABASE_URL: url } });
  for (const secret of SECRETS) expect(run.stdout + run.stderr).not.toContain(secret);
  return { run, report: options.text ? { ok: run.code === 0, checks: [] } : doctorReport(jsonOf(run)) };
}

/** The name and status of each check, as `name:status`. */
function statuses(report: DoctorRun['report']): string[] {
  return report.checks.map((c) => `${c.name}:${c.status}`);
}

/** A connection as the cluster's superuser to `url`'s database. */
async function admin(url: string): Promise<Database<DriverCapabilities>> {
  return new Database(await connectPg(url));
}

let roles = 0;

/** A new role that may log in and nothing more; resolves to `url` with that role and its password. */
async function limitedRole(url: string): Promise<{ name: string; url: string }> {
  const name = `agentbus_doctor_${process.pid}_${++roles}`;
  const db = await admin(withDatabase(inject('pgUrl'), 'postgres'));
  db.exec(`CREATE ROLE ${name} LOGIN PASSWORD '${ROLE_PASSWORD}'`);
  const limited = new URL(url);
  limited.username = name;
  limited.password = encodeURIComponent(ROLE_PASSWORD);
  return { name, url: limited.toString() };
}

/** A bus made by this agentbus's migrations, or by those up to `upTo` (an older agentbus's schema). */
async function migratedBus(upTo?: number): Promise<string> {
  const url = await freshDatabase();
  let migrationsDir = postgresMigrationsDir();
  if (upTo !== undefined) {
    migrationsDir = join(tempDir(), 'sql');
    mkdirSync(migrationsDir);
    for (const name of readdirSync(postgresMigrationsDir()).filter((n) => Number(n.slice(0, 4)) <= upTo)) copyFileSync(join(postgresMigrationsDir(), name), join(migrationsDir, name));
  }
  closeAfterTest((await openPostgresDatabase({ url, migrationsDir })).db);
  return url;
}

/** The schema versions recorded in `url`'s database, or undefined when it has no ledger. */
async function recordedVersions(url: string): Promise<number[] | undefined> {
  const db = await admin(url);
  if (db.get(db.capabilities.dialect.tableExists, ['schema_migrations']) === undefined) return undefined;
  return db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version').map((r) => r.version);
}

/** The versions of the package's PostgreSQL migrations, ascending. */
function knownVersions(): number[] {
  return readdirSync(postgresMigrationsDir())
    .filter((n) => n.endsWith('.sql'))
    .map((n) => Number(n.slice(0, 4)))
    .sort((a, b) => a - b);
}

/** Fails unless `check` is what `agentbus mcp`'s start-up meets on AGENTBUS_DATABASE_URL=`url`: its error's code and sentence. */
async function sameAsStartUp(check: Check, url: string): Promise<void> {
  const refusal = await expectError(() => openPostgresBus({ database_url: url, databaseUrlKey: 'AGENTBUS_DATABASE_URL' }, Date.now), DbError);
  expect({ code: check.code, message: check.message }).toEqual({ code: refusal.code, message: refusal.message });
}

/** A TCP server on 127.0.0.1 that answers every connection with an HTTP error and hangs up: a program that is not PostgreSQL. */
async function impostor(): Promise<string> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `postgres://agentbus@127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/agentbus`;
}

describe('agentbus doctor on a healthy bus on a server', () => {
  it('checks the URL, server, schema, privileges and wake-ups, all ok, exit 0; the file checks are left out, not failed; the URL shown without its password', async () => {
    const url = await migratedBus();
    const { run, report } = await doctor(url);
    expect(run.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(statuses(report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    expect(report.leftOut?.checks).toEqual(expect.arrayContaining(['file_system', 'disk', 'database', 'lock_protocol', 'wal', 'integrity', 'stale_locks', 'shared_files']));
    const shown = doctorCheck(report, 'database_url').message;
    expect(shown).toContain(`${new URL(url).host}${new URL(url).pathname}`);
    expect(doctorCheck(report, 'server').message).toContain(String((await admin(url)).get<{ v: string }>("SELECT current_setting('server_version') AS v")?.v));
    const text = await doctor(url, { text: true });
    expect(text.run.code).toBe(0);
    expect(text.run.stdout.split('\n').filter((line) => /^(PROBLEM|WARN)\b/.test(line))).toEqual([]);
  });

  it('with an agent at work on it: ok while `agentbus mcp` serves, which goes on working after doctor', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    try {
      await server.call('register', { name: 'Alice' });
      await server.call('send', { as: 'Alice', channel: 'general', content: 'before doctor' });
      const { run, report } = await doctor(testDatabaseUrl(dir));
      expect(run.code).toBe(0);
      expect(statuses(report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
      expect(await server.call('send', { as: 'Alice', channel: 'general', content: 'after doctor' })).toMatchObject({ seq: expect.any(Number) });
    } finally {
      await server.close();
    }
  });

  it('a password given as a `password` parameter of the URL connects, and is shown nowhere', async () => {
    const url = new URL(await migratedBus());
    url.password = '';
    url.searchParams.set('password', TEST_PASSWORD);
    const { run, report } = await doctor(url.toString());
    expect(run.code).toBe(0);
    expect(statuses(report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    const wrong = new URL(url);
    wrong.searchParams.set('password', 'wrong-password');
    const refused = await doctor(wrong.toString());
    expect(doctorCheck(refused.report, 'server').code).toBe('permission');
  });

  it('on a database with no bus yet: schema ok (made by the first agent), and doctor creates nothing', async () => {
    const url = await freshDatabase();
    const { run, report } = await doctor(url);
    expect(run.code).toBe(0);
    expect(statuses(report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    expect(doctorCheck(report, 'schema').message).toContain(String(knownVersions().at(-1)));
    expect(await recordedVersions(url)).toBeUndefined();
    expect((await admin(url)).get("SELECT count(*)::int AS n FROM pg_catalog.pg_tables WHERE schemaname = 'public'")).toEqual({ n: 0 });
  });

  it('on an older schema: ok (the next agentbus mcp upgrades it), and doctor upgrades nothing', async () => {
    const known = knownVersions();
    const older = known.at(-2) as number;
    const url = await migratedBus(older);
    const { run, report } = await doctor(url);
    expect(run.code).toBe(0);
    expect(statuses(report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    expect(doctorCheck(report, 'schema').message).toContain(String(older));
    expect(doctorCheck(report, 'schema').message).toContain(String(known.at(-1)));
    expect(await recordedVersions(url)).toEqual(known.slice(0, -1));
  });
});

describe('agentbus doctor on a server: what agentbus mcp would refuse', () => {
  it('a schema newer than this agentbus: schema problem schema_newer, exit 1, the other checks still run', async () => {
    const url = await migratedBus();
    (await admin(url)).run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, '0099_future.sql', 'x', 1)");
    const { run, report } = await doctor(url);
    expect(run.code).toBe(1);
    expect(report.ok).toBe(false);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:ok', 'schema:problem', 'privileges:ok', 'wakeups:ok']);
    expect(doctorCheck(report, 'schema').code).toBe('schema_newer');
    // No restore from the data directory's backups/ is offered: a server's backups are its own.
    expect(doctorCheck(report, 'schema').message).not.toContain('backups/');
    const refused = await expectError(() => openPostgresDatabase({ url }), DbError, 'schema_newer');
    expect(refused.message).toBe(doctorCheck(report, 'schema').message);
  });

  it('a malformed URL: database_url problem cantopen, naming its setting, the password not echoed, and no connection tried', async () => {
    const { run, report } = await doctor('postgres://agentbus:s3cret@');
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:problem']);
    expect(doctorCheck(report, 'database_url')).toMatchObject({ code: 'cantopen', message: expect.stringContaining('AGENTBUS_DATABASE_URL') });
    await sameAsStartUp(doctorCheck(report, 'database_url'), 'postgres://agentbus:s3cret@');
  });

  it('a config that cannot be read while AGENTBUS_DATABASE_URL is set: the config problem, and neither server nor file checks', async () => {
    const { run, report } = await doctor(await freshDatabase(), { config: { receive_max_wait_seconds: 999 } });
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:problem', 'data_directory:ok']);
    expect(report.leftOut?.checks).toEqual(expect.arrayContaining(['server', 'privileges', 'integrity']));
  });

  it('a password file other users can read: database_url problem permission', async () => {
    const file = join(tempDir(), 'password');
    writeFileSync(file, `${TEST_PASSWORD}\n`);
    chmodSync(file, 0o644);
    const url = new URL(await freshDatabase());
    url.password = '';
    const { run, report } = await doctor(url.toString(), { config: { database_password_file: file } });
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:problem']);
    expect(doctorCheck(report, 'database_url').code).toBe('permission');
    chmodSync(file, 0o600);
    const fixed = await doctor(url.toString(), { config: { database_password_file: file } });
    expect(fixed.run.code).toBe(0);
    expect(doctorCheck(fixed.report, 'database_url').status).toBe('ok');
  });

  it('a wrong password: server problem permission, never showing it', async () => {
    const url = new URL(await freshDatabase());
    url.password = 'wrong-password';
    const { run, report } = await doctor(url.toString());
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:problem']);
    expect(doctorCheck(report, 'server')).toMatchObject({ code: 'permission', message: expect.stringContaining('password') });
    await sameAsStartUp(doctorCheck(report, 'server'), url.toString());
  });

  it('a database the server does not have: server problem cantopen', async () => {
    const url = withDatabase(inject('pgUrl'), 'no_such_database');
    const { run, report } = await doctor(url);
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:problem']);
    expect(doctorCheck(report, 'server').code).toBe('cantopen');
    await sameAsStartUp(doctorCheck(report, 'server'), url);
  });

  it('nothing listening on the port: server problem unavailable, naming host and port, as the start-up says', async () => {
    const url = 'postgres://agentbus@127.0.0.1:1/agentbus';
    const { run, report } = await doctor(url);
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:problem']);
    expect(doctorCheck(report, 'server')).toMatchObject({ code: 'unavailable', message: expect.stringContaining('port') });
    await sameAsStartUp(doctorCheck(report, 'server'), url);
  });

  it('a program that is not PostgreSQL on the port: server problem unavailable, saying to check host and port', async () => {
    // Not compared with an opener here: the impostor answers from this thread, which an opener's blocking call holds.
    const { run, report } = await doctor(await impostor());
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:problem']);
    expect(doctorCheck(report, 'server')).toMatchObject({ code: 'unavailable', message: expect.stringContaining('port') });
  });
});

describe('agentbus doctor on a server: the role of database_url', () => {
  it('a role that may not create the schema in an empty database: privileges problem permission, as the first agentbus mcp would fail; ok once granted', async () => {
    const url = await freshDatabase();
    const role = await limitedRole(url);
    const { run, report } = await doctor(role.url);
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:ok', 'schema:ok', 'privileges:problem', 'wakeups:ok']);
    expect(doctorCheck(report, 'privileges')).toMatchObject({ code: 'permission', message: expect.stringContaining('GRANT CREATE ON SCHEMA public') });
    await expectError(() => openPostgresDatabase({ url: role.url }), DbError, 'permission');
    (await admin(url)).exec(`GRANT CREATE ON SCHEMA public TO ${role.name}`);
    const granted = await doctor(role.url);
    expect(statuses(granted.report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    expect(await recordedVersions(url)).toBeUndefined();
  });

  it('a role without privileges on a bus: problems naming the GRANTs, the sequence included; ok once granted, and then agentbus mcp opens it', async () => {
    const url = await migratedBus();
    const role = await limitedRole(url);
    const none = await doctor(role.url);
    expect(none.run.code).toBe(1);
    // It cannot even read the schema's ledger, as the server's start-up could not.
    expect(statuses(none.report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:ok', 'schema:problem', 'privileges:problem', 'wakeups:ok']);
    expect(doctorCheck(none.report, 'schema').code).toBe('permission');
    expect(doctorCheck(none.report, 'privileges')).toMatchObject({ code: 'permission', message: expect.stringContaining('ON ALL TABLES IN SCHEMA public') });
    await expectError(() => openPostgresDatabase({ url: role.url }), DbError, 'permission');
    const owner = await admin(url);
    owner.exec(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role.name}`);
    const tables = await doctor(role.url);
    expect(statuses(tables.report)).toContain('privileges:problem');
    expect(doctorCheck(tables.report, 'privileges').message).toContain('ON ALL SEQUENCES IN SCHEMA public');
    owner.exec(`GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role.name}`);
    const granted = await doctor(role.url);
    expect(granted.run.code).toBe(0);
    expect(statuses(granted.report)).toEqual(SERVER_CHECKS.map((name) => `${name}:ok`));
    closeAfterTest((await openPostgresDatabase({ url: role.url })).db);
  });

  it('a role whose connection limit leaves no room for the listening connection: wakeups warn (waits poll), exit 0', async () => {
    const url = await migratedBus();
    const role = await limitedRole(url);
    const owner = await admin(url);
    owner.exec(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role.name}; GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role.name}`);
    owner.exec(`ALTER ROLE ${role.name} CONNECTION LIMIT 1`);
    const { run, report } = await doctor(role.url);
    expect(run.code).toBe(0);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:ok', 'schema:ok', 'privileges:ok', 'wakeups:warn']);
    expect(doctorCheck(report, 'wakeups').message).toContain('polling');
  });

  it('a search_path naming no schema that exists: privileges problem (agentbus would have nowhere to put its tables)', async () => {
    const plain = await freshDatabase();
    const url = new URL(plain);
    url.searchParams.set('options', '-c search_path=nowhere');
    const { run, report } = await doctor(url.toString());
    expect(run.code).toBe(1);
    expect(statuses(report)).toEqual(['config:ok', 'data_directory:ok', 'database_url:ok', 'server:ok', 'schema:ok', 'privileges:problem', 'wakeups:ok']);
    expect(doctorCheck(report, 'privileges').message).toContain('CREATE SCHEMA');
    // The start-up fails on it too, and the database stays empty.
    await expectError(() => openPostgresDatabase({ url: url.toString() }), DbError);
    expect((await admin(plain)).get("SELECT count(*)::int AS n FROM pg_catalog.pg_tables WHERE schemaname = 'public'")).toEqual({ n: 0 });
  });

  it('an older schema whose tables another role owns: privileges problem (only the owner can upgrade them)', async () => {
    const url = await migratedBus(knownVersions().at(-2));
    const role = await limitedRole(url);
    const owner = await admin(url);
    owner.exec(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role.name}; GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role.name}; GRANT CREATE ON SCHEMA public TO ${role.name}`);
    const { run, report } = await doctor(role.url);
    expect(run.code).toBe(1);
    expect(doctorCheck(report, 'schema').status).toBe('ok');
    expect(doctorCheck(report, 'privileges')).toMatchObject({ status: 'problem', code: 'permission', message: expect.stringContaining(`TO ${role.name}`) });
    await expectError(() => openPostgresDatabase({ url: role.url }), DbError, 'permission');
  });
});
