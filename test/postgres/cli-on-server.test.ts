/**
 * The console commands on a bus whose database_url names a PostgreSQL server
 * (src/cli/server-database.ts): what the file openers decide from the file,
 * decided from the server's schema. A command that only reads never creates
 * or upgrades the schema; a command that writes upgrades it as `agentbus mcp`
 * would; the commands that work on the file itself (backup, restore,
 * convert between lock protocols) refuse and name the server's own tools,
 * never showing the password. The rest of the CLI suite (test/cli/) runs on
 * postgres as on SQLite.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { appliedMigrations, loadMigrations } from '../../src/db/open/migrations.js';
import { connectPostgres, openPostgresDatabase, postgresMigrationsDir } from '../../src/db/open/open-postgres.js';
import { jsonOf, prepareCliDir, runCli } from '../cli/cli-process.js';
import { tempDir } from '../support/test-driver.js';
import { testDatabaseCreated } from '../support/test-databases.js';
import { TEST_PASSWORD } from './global-setup.js';
import { closeAfterTest } from './pg-test.js';

/** The versions schema_migrations of `dir`'s database holds. */
async function appliedVersions(dir: string): Promise<number[]> {
  const db: Database = closeAfterTest(await connectPostgres({ url: testDatabaseCreated(dir) }));
  return appliedMigrations(db).map((m) => m.version);
}

/** sql/postgres/ without its newest migration, in a directory of its own: an older agentbus's files. */
function olderMigrationsDir(): { dir: string; newest: number } {
  const dir = tempDir('agentbus-older-sql-');
  const files = readdirSync(postgresMigrationsDir()).filter((f) => f.endsWith('.sql')).sort();
  mkdirSync(dir, { recursive: true });
  for (const file of files.slice(0, -1)) copyFileSync(join(postgresMigrationsDir(), file), join(dir, file));
  return { dir, newest: loadMigrations(postgresMigrationsDir()).at(-1)?.version ?? 0 };
}

/** The test cluster's password appears nowhere in `text`, as typed or as the URL encodes it. */
function expectNoPassword(text: string): void {
  expect(text).not.toContain(TEST_PASSWORD);
  expect(text).not.toContain(encodeURIComponent(TEST_PASSWORD));
}

describe('console commands on a server bus', () => {
  it('a server database without a bus yet: status says so, readers and post refuse, and nothing is created', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const status = await runCli(dir, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = jsonOf(status);
    expect(report.database).toMatchObject({ exists: false, driver: null });
    expect(report.database.path).toMatch(/^postgres:\/\//);
    expect(report.new_database).toMatchObject({ driver: 'postgres', lock_protocol: 'server', why: 'AGENTBUS_DATABASE_URL names this server' });
    for (const args of [['tail'], ['search', 'anything'], ['post', 'work', 'hi', '--as', 'Dana']]) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/no bus on postgres:\/\/.*agentbus mcp/);
    }
    expectNoPassword(`${status.stdout}${status.stderr}`);
    expect(await appliedVersions(dir)).toEqual([]);
  });

  it('an older schema: status reports it, readers refuse (schema_older, exit 3) without upgrading, and post upgrades it as agentbus mcp would', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const older = olderMigrationsDir();
    const { db } = await openPostgresDatabase({ url: testDatabaseCreated(dir), migrationsDir: older.dir });
    db.close();
    const before = await appliedVersions(dir);
    expect(before).not.toContain(older.newest);

    const report = jsonOf(await runCli(dir, ['status', '--json']));
    expect(report.database).toMatchObject({ exists: true, driver: 'postgres', lock_protocol: 'server', schema_version: before.at(-1) });
    expect(report.notices.map((n: { kind: string }) => n.kind)).toEqual(['schema_older']);
    for (const args of [['tail'], ['search', 'anything']]) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(3);
      expect(run.stderr).toMatch(/schema_older:/);
    }
    expect(await appliedVersions(dir)).toEqual(before);

    // post writes, so it upgrades as a server of this version would (and then has no channel to post to).
    const post = await runCli(dir, ['post', 'work', 'hi', '--as', 'Dana']);
    expect(post.stderr).not.toMatch(/schema_older/);
    expect(await appliedVersions(dir)).toContain(older.newest);
  });

  it('a newer schema is refused by every command, naming the upgrade, and left as it is', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const { db } = await openPostgresDatabase({ url: testDatabaseCreated(dir) });
    db.run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, '0099_future.sql', 'x', 1)");
    db.close();
    for (const args of [['status'], ['tail'], ['post', 'work', 'hi', '--as', 'Dana']]) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/newer than this agentbus.*Upgrade this agentbus/);
    }
    expect((await appliedVersions(dir)).at(-1)).toBe(99);
  });

  it('backup, restore and convert between lock protocols refuse (exit 3), naming PostgreSQL\'s tools, never the password', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    (await openPostgresDatabase({ url: testDatabaseCreated(dir) })).db.close();
    const cases: [readonly string[], RegExp][] = [
      [['backup'], /pg_dump/],
      [['restore', join(dir, 'some.db')], /pg_restore/],
      [['convert', '--to', 'portable'], /agentbus convert --to postgres/],
    ];
    for (const [args, names] of cases) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(3);
      expect(run.stderr).toMatch(/the bus is on a PostgreSQL server/);
      expect(run.stderr).toMatch(names);
      expectNoPassword(run.stderr);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('agentbus.db') || f === 'backups')).toEqual([]);
  });
});
