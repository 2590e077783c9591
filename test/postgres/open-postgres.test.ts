/**
 * Opening a bus on PostgreSQL (src/db/open/open-postgres.ts): the baseline schema
 * of sql/postgres/ at the SQLite schema's version, migrations recorded and
 * checked as on SQLite, a newer schema refused, and each start-up failure a
 * person must fix (wrong password, missing database, no privileges, a
 * server that is not PostgreSQL or not there) as a DbError code whose
 * message names the fix and never the password.
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/db/open/migrations.js';
import { openPostgresDatabase, postgresMigrationsDir } from '../../src/db/open/open-postgres.js';
import { expectError } from '../support/expect-error.js';
import { TEST_PASSWORD } from './global-setup.js';
import { closeAfterTest, connectPg, freshDatabase, withDatabase } from './pg-test.js';

async function open(url: string, deadlineMs = 5_000) {
  const opened = await openPostgresDatabase({ url, deadlineMs });
  closeAfterTest(opened.db);
  return opened;
}

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A TCP server on 127.0.0.1 that answers every connection with `reply` (not the PostgreSQL protocol). */
async function impostor(reply: string): Promise<string> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(reply);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `postgres://agentbus@127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/agentbus`;
}

describe('the schema', () => {
  it('has every SQLite migration since the baseline as a PostgreSQL one of the same version, and is never behind', () => {
    const sqlite = loadMigrations(defaultMigrationsDir());
    const postgres = loadMigrations(postgresMigrationsDir());
    const pgVersions = new Set(postgres.map((m) => m.version));
    const baseline = postgres[0]?.version ?? 0;
    expect(sqlite.filter((m) => m.version > baseline && !pgVersions.has(m.version)).map((m) => m.name)).toEqual([]);
    expect(postgres.at(-1)?.version ?? 0).toBeGreaterThanOrEqual(sqlite.at(-1)?.version ?? 0);
  });

  it('a new database gets the baseline and every later version, recorded in schema_migrations; the next open applies nothing', async () => {
    const versions = loadMigrations(postgresMigrationsDir()).map((m) => m.version);
    expect(versions[0]).toBe(11);
    const url = await freshDatabase();
    const first = await open(url);
    expect(first.created).toBe(true);
    expect(first.migrations.applied).toEqual(versions);
    expect(first.migrations.version).toBe(versions.at(-1));
    // The baseline's two channels, and the reserved channel of direct messages (0012).
    expect(first.db.all('SELECT name FROM channels ORDER BY name')).toEqual([{ name: '@direct' }, { name: 'general' }, { name: 'memory' }]);
    first.db.close();
    const again = await open(url);
    expect(again.created).toBe(false);
    expect(again.migrations).toMatchObject({ applied: [], version: versions.at(-1) });
  });

  it("the baseline's triggers keep the counters and clear a former owner's process identity, as on SQLite", async () => {
    const { db } = await open(await freshDatabase());
    const insert = "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes, memory_id, revision) VALUES ('general', 'a', 'c', 1, 'text', ?, 1, ?, ?) RETURNING seq";
    const seq = db.get<{ seq: number }>(insert, ['hello world', null, null])?.seq;
    db.get(insert, ['a memory', 1, 1]);
    expect(db.get("SELECT live FROM channel_message_counts WHERE channel = 'general'")).toEqual({ live: 2 });
    expect(db.get('SELECT generation FROM memory_generation')).toEqual({ generation: 1 });
    db.run('UPDATE messages SET tombstone = 1 WHERE seq = ?', [seq as number]);
    expect(db.get("SELECT live FROM channel_message_counts WHERE channel = 'general'")).toEqual({ live: 1 });
    // The capacity measure (0013): the summed bytes, through inserts, a bulk delete and an update.
    const total = () => db.get<{ used: number }>('SELECT total AS used FROM message_bytes')?.used;
    expect(total()).toBe(2);
    db.run("INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) SELECT 'general', 'a', 'c', 1, 'text', 'x', g FROM generate_series(10, 14) AS g");
    expect(total()).toBe(2 + 60);
    db.run('UPDATE messages SET bytes = 100 WHERE bytes = 14');
    expect(total()).toBe(2 + 60 - 14 + 100);
    db.run('DELETE FROM messages WHERE bytes >= 10');
    expect(total()).toBe(2);
    expect(total()).toBe(db.get<{ used: number }>('SELECT sum(bytes)::int8 AS used FROM messages')?.used);
    expect(db.get("SELECT count(*)::int AS n FROM messages WHERE content_tsv @@ to_tsquery('simple', 'memory')")).toEqual({ n: 1 });
    db.run("INSERT INTO sessions (sender, context, owner, heartbeat, registered_at, owner_process, clock_domain, heartbeat_mono) VALUES ('a', 'c', 'o1', 1, 1, 'p', 'd', 5)");
    db.run("UPDATE sessions SET owner = 'o2' WHERE sender = 'a'");
    expect(db.get("SELECT owner, owner_process, clock_domain, heartbeat_mono FROM sessions WHERE sender = 'a'")).toEqual({ owner: 'o2', owner_process: null, clock_domain: null, heartbeat_mono: null });
  });

  it('a schema newer than this agentbus is refused, and nothing is written', async () => {
    const url = await freshDatabase();
    const { db } = await open(url);
    db.run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, '0099_future.sql', 'x', 1)");
    db.close();
    await expectError(() => openPostgresDatabase({ url }), DbError, 'schema_newer');
  });

  it('an applied migration whose file changed is refused as migration_edited', async () => {
    const url = await freshDatabase();
    const { db } = await open(url);
    db.run("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 11");
    db.close();
    await expectError(() => openPostgresDatabase({ url }), DbError, 'migration_edited');
  });
});

describe('start-up failures', () => {
  it('a wrong password is `permission`, naming where the password comes from and never showing it', async () => {
    const url = new URL(inject('pgUrl'));
    url.password = 'not-the-password';
    const error = await expectError(() => openPostgresDatabase({ url: url.toString() }), DbError, 'permission');
    expect(error.message).toContain('password');
    expect(error.message).not.toContain('not-the-password');
    expect(error.message).not.toContain(encodeURIComponent(TEST_PASSWORD));
  });

  it('a database that does not exist is `cantopen`, saying to create it', async () => {
    const error = await expectError(() => openPostgresDatabase({ url: withDatabase(inject('pgUrl'), 'no_such_database') }), DbError, 'cantopen');
    expect(error.message).toContain('createdb');
  });

  it('a role without the privilege to create the tables is `permission`, and the database stays empty', async () => {
    const url = await freshDatabase();
    const { db } = await open(withDatabase(inject('pgUrl'), 'postgres'));
    db.exec("DROP ROLE IF EXISTS agentbus_limited; CREATE ROLE agentbus_limited LOGIN PASSWORD 'limited'");
    const limited = new URL(url);
    limited.username = 'agentbus_limited';
    limited.password = 'limited';
    const error = await expectError(() => openPostgresDatabase({ url: limited.toString() }), DbError, 'permission');
    expect(error.message).toContain('GRANT');
    const owner = new Database(await connectPg(url));
    expect(owner.get("SELECT count(*)::int AS n FROM pg_catalog.pg_tables WHERE schemaname = 'public'")).toEqual({ n: 0 });
  });

  it('a server that does not speak PostgreSQL, or none at all, is `unavailable` within the deadline', async () => {
    for (const url of [await impostor('HTTP/1.1 400 Bad Request\r\n\r\n'), 'postgres://agentbus@127.0.0.1:1/agentbus']) {
      const started = performance.now();
      await expectError(() => openPostgresDatabase({ url, deadlineMs: 3_000 }), DbError, 'unavailable');
      expect(performance.now() - started).toBeLessThan(4_000);
    }
  });
});

describe('the migrations folder', () => {
  it('ships beside the SQLite migrations', () => {
    expect(postgresMigrationsDir()).toBe(join(defaultMigrationsDir(), 'postgres'));
  });
});
