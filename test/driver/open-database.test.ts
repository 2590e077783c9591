import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DbError, type DbErrorCode } from '../../src/db/contract/db-error.js';
import { APPLICATION_ID, readFileState } from '../../src/db/storage/file-header.js';
import { databasePath, openDatabase } from '../../src/db/open/open-database.js';
import type { DriverChoice } from '../../src/db/open/select-driver.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/db/open/migrations.js';
import { expectError } from '../support/expect-error.js';
import { fixturePath, runFixture } from '../support/child-process.js';
import { openTestDatabase, otherProtocol, tempDir, testDriver } from '../support/test-driver.js';

const SCHEMA_TABLES = ['channel_message_counts', 'channels', 'direct_recipients', 'embeddings', 'expired_subscriptions', 'known_names', 'leases', 'memory_generation', 'messages', 'messages_fts', 'notices', 'receipts', 'reservation_takeovers', 'reservations', 'schema_migrations', 'session_sightings', 'sessions', 'subscriptions'];
/** Every shipped migration version, ascending: a new database applies them all. */
const SHIPPED = loadMigrations(defaultMigrationsDir()).map((m) => m.version);

/** A migrations directory with the shipped schema plus extra files. */
function migrationsDir(extra: Record<string, string> = {}): string {
  const dir = tempDir('agentbus-sql-');
  copyFileSync(join(defaultMigrationsDir(), '0001_schema.sql'), join(dir, '0001_schema.sql'));
  for (const [name, sql] of Object.entries(extra)) writeFileSync(join(dir, name), sql);
  return dir;
}

/** Every byte of the database and whether its side files exist. */
function fingerprint(dataDir: string): string {
  const path = databasePath(dataDir);
  const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
  return `${hash} wal=${existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`).length : -1}`;
}

async function expectRefused(promise: Promise<unknown>, code: DbErrorCode): Promise<void> {
  await expectError(() => promise, DbError, code);
}

const COUNTER = { '0002_counter.sql': 'CREATE TABLE counter (x INTEGER);\nINSERT INTO counter VALUES (1);\n' };

describe('opening, creating and migrating', () => {
  it('creates the whole schema once, marks the lock protocol, and reopens without changes', async () => {
    const dir = tempDir();
    const driver = await testDriver();
    const first = await openTestDatabase(dir);
    expect(first.created).toBe(true);
    expect(first.migrations).toEqual({ applied: SHIPPED, version: SHIPPED.at(-1), backupPath: undefined });
    const tables = first.db
      .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'messages_fts_%' AND name <> 'sqlite_sequence' ORDER BY name")
      .map((r) => r.name);
    expect(tables).toEqual(SCHEMA_TABLES);
    expect(first.db.pragma('application_id')).toBe(APPLICATION_ID[driver.capabilities.lockProtocol]);
    expect(first.db.get("SELECT owner, expires_at FROM leases WHERE name = 'maintenance'")).toEqual({ owner: '', expires_at: 0 });
    first.db.close();
    expect(readFileState(databasePath(dir))).toEqual({ kind: 'agentbus', protocol: driver.capabilities.lockProtocol });

    const again = await openTestDatabase(dir);
    expect(again.created).toBe(false);
    expect(again.migrations).toEqual({ applied: [], version: SHIPPED.at(-1), backupPath: undefined });
    again.db.close();
  });

  it('several processes opening a new database at once run each migration exactly once', async () => {
    const dir = tempDir();
    const sql = migrationsDir(COUNTER);
    const results = await Promise.all([0, 1, 2, 3, 4].map(() => runFixture('db-child.js', ['open', dir, sql])));
    for (const r of results) expect(r.code, r.stderr + r.stdout).toBe(0);
    const reports = results.map((r) => JSON.parse(r.stdout) as { applied: number[]; created: boolean });
    expect(reports.flatMap((r) => r.applied).sort()).toEqual([1, 2]);
    expect(reports.filter((r) => r.created)).toHaveLength(1);
    const { db } = await openTestDatabase(dir, { migrationsDir: sql });
    expect(db.get('SELECT count(*) AS n FROM counter')).toEqual({ n: 1 });
    expect(db.get('SELECT count(*) AS n FROM schema_migrations')).toEqual({ n: 2 });
    db.close();
  });

  it('backs up a non-empty database with VACUUM INTO before upgrading it', async () => {
    const dir = tempDir();
    const v1 = migrationsDir();
    const { db } = await openTestDatabase(dir, { migrationsDir: v1 });
    db.transaction(() => db.run("INSERT INTO channels (name, kind) VALUES ('lobby', 'ordinary')"));
    db.close();
    const upgraded = await openTestDatabase(dir, { migrationsDir: migrationsDir(COUNTER) });
    expect(upgraded.migrations.applied).toEqual([2]);
    const backup = upgraded.migrations.backupPath;
    expect(backup).toMatch(/backups\/agentbus-.*-v1\.db$/);
    upgraded.db.close();
    expect(readdirSync(join(dir, 'backups'))).toHaveLength(1);
    const backupDir = tempDir();
    copyFileSync(backup!, databasePath(backupDir));
    const restored = await openTestDatabase(backupDir, { migrationsDir: v1 });
    expect(restored.db.all('SELECT name FROM channels ORDER BY name')).toEqual([{ name: 'general' }, { name: 'lobby' }, { name: 'memory' }]);
    expect(restored.db.get('SELECT max(version) AS v FROM schema_migrations')).toEqual({ v: 1 });
    restored.db.close();
  });

  it('refuses a database newer than the code and leaves it byte-identical', async () => {
    const dir = tempDir();
    (await openTestDatabase(dir, { migrationsDir: migrationsDir(COUNTER) })).db.close();
    const before = fingerprint(dir);
    await expectRefused(openTestDatabase(dir, { migrationsDir: migrationsDir() }), 'schema_newer');
    expect(fingerprint(dir)).toBe(before);
  });

  it('refuses edited history and leaves the file byte-identical', async () => {
    const dir = tempDir();
    const sql = migrationsDir(COUNTER);
    (await openTestDatabase(dir, { migrationsDir: sql })).db.close();
    const before = fingerprint(dir);
    writeFileSync(join(sql, '0002_counter.sql'), 'CREATE TABLE counter (x INTEGER);\n');
    await expectRefused(openTestDatabase(dir, { migrationsDir: sql }), 'migration_edited');
    expect(fingerprint(dir)).toBe(before);
  });

  it('refuses a driver name it does not know (postgres included: that bus opens through database_url), creating nothing', async () => {
    const dir = tempDir();
    for (const driver of ['postgres', 'sqlite', '']) {
      await expect(openDatabase({ dataDir: dir, driver: driver as DriverChoice })).rejects.toThrow(TypeError);
    }
    expect(existsSync(databasePath(dir))).toBe(false);
  });

  it('refuses a file that is not SQLite, and a SQLite file that is not agentbus, untouched', async () => {
    const text = tempDir();
    writeFileSync(databasePath(text), 'hello, this is not a database at all, but it is long enough to have a header'.repeat(3));
    const textBefore = fingerprint(text);
    await expectRefused(openTestDatabase(text), 'foreign_file');
    expect(fingerprint(text)).toBe(textBefore);

    const other = tempDir();
    const driver = await testDriver();
    const conn = driver.open(databasePath(other), { busyTimeoutMs: 1000 });
    conn.exec('CREATE TABLE someone_elses (x INTEGER); INSERT INTO someone_elses VALUES (1);');
    conn.close();
    const otherBefore = fingerprint(other);
    await expectRefused(openTestDatabase(other), 'foreign_file');
    expect(fingerprint(other)).toBe(otherBefore);
  });

  it('refuses a database of the other lock protocol, untouched', async () => {
    const dir = tempDir();
    const driver = await testDriver();
    (await openTestDatabase(dir)).db.close();
    const path = databasePath(dir);
    const bytes = readFileSync(path);
    bytes.writeUInt32BE(APPLICATION_ID[otherProtocol(driver.capabilities.lockProtocol)], 68);
    writeFileSync(path, bytes);
    const before = fingerprint(dir);
    await expectRefused(openTestDatabase(dir), 'protocol_mismatch');
    expect(fingerprint(dir)).toBe(before);
  });

  it('names the data directory when it is not writable', async () => {
    const parent = tempDir();
    const dir = join(parent, 'locked');
    mkdirSync(dir, { mode: 0o500 });
    chmodSync(dir, 0o500);
    if (process.getuid?.() === 0) {
      // root ignores permission bits through CAP_DAC_OVERRIDE: drop it (util-linux setpriv) so the
      // bits apply. Still root, so the checkout stays readable wherever CI cloned it.
      const child = spawn('setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, fixturePath('db-child.js'), 'open', dir], {
        env: { ...process.env, AGENTBUS_DRIVER: process.env.AGENTBUS_TEST_DRIVER },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const [code] = await once(child, 'exit');
      expect(code).toBe(3);
      expect(JSON.parse(out)).toEqual({ error: 'permission' });
    } else {
      await expectRefused(openTestDatabase(dir), 'permission');
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
