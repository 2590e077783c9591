/**
 * The bridge's promises (docs/architecture.md, "An asynchronous engine"):
 * every call ends within its deadline, with a retryable `unavailable` when
 * the server does not answer; the connection comes back by itself after a
 * server restart or outage; a transaction never continues on a new
 * connection. Real outages: the backend process stopped with SIGSTOP, a
 * cluster of this file's own stopped and restarted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { startCluster, type Cluster } from '../../scripts/pg-cluster.js';
import { expectErrorSync } from '../support/expect-error.js';
import { Bridge } from '../../drivers/postgres/bridge.js';
import { POSTGRES_CAPABILITIES } from '../../drivers/postgres/postgres-driver.js';
import { PostgresConnection } from '../../drivers/postgres/postgres-connection.js';
import { closeAfterTest, connectPg, freshDatabase } from './pg-test.js';

describe('deadlines', () => {
  it('a server that stops answering fails the call as unavailable within the deadline, and the next call reconnects', async () => {
    const conn = await connectPg(await freshDatabase(), { deadlineMs: 1_500 });
    const db = new Database(conn);
    const backend = Number(db.get<{ pid: number }>('SELECT pg_backend_pid() AS pid')?.pid);
    process.kill(backend, 'SIGSTOP');
    try {
      const started = performance.now();
      expectErrorSync(() => db.get('SELECT 1 AS one'), DbError, 'unavailable');
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(1_400);
      expect(took).toBeLessThan(2_500);
    } finally {
      process.kill(backend, 'SIGCONT');
    }
    expect(db.get('SELECT 1 AS one')).toEqual({ one: 1 });
    expect(Number(db.get<{ pid: number }>('SELECT pg_backend_pid() AS pid')?.pid)).not.toBe(backend);
  });

  it('a statement that runs past the deadline is cancelled by the server first (statement_timeout), and the connection stays usable', async () => {
    const db = new Database(await connectPg(await freshDatabase(), { deadlineMs: 1_500 }));
    const started = performance.now();
    expectErrorSync(() => db.get('SELECT pg_sleep(5) AS slept'), DbError, 'busy');
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(db.get('SELECT 2 AS two')).toEqual({ two: 2 });
  });
});

describe('outages of the server', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ fsync: false });
  });
  afterAll(() => cluster?.stop());

  it('after a restart, calls work again by themselves: at most one fails, as unavailable', async () => {
    const db = new Database(await connectPg(cluster.url, { deadlineMs: 3_000 }));
    expect(db.get('SELECT 1 AS one')).toEqual({ one: 1 });
    cluster.restart();
    const codes: string[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        expect(db.get('SELECT 1 AS one')).toEqual({ one: 1 });
        break;
      } catch (error) {
        expect(error).toBeInstanceOf(DbError);
        codes.push((error as DbError).code);
      }
    }
    expect(codes.filter((c) => c !== 'unavailable')).toEqual([]);
    expect(codes.length).toBeLessThanOrEqual(1);
    expect(db.get('SELECT 3 AS three')).toEqual({ three: 3 });
  });

  it('while the server is down a call fails fast as unavailable; once it is back the next call works', async () => {
    const db = new Database(await connectPg(cluster.url, { deadlineMs: 3_000 }));
    db.get('SELECT 1 AS one');
    cluster.stopServer();
    try {
      for (let i = 0; i < 2; i++) {
        const started = performance.now();
        expectErrorSync(() => db.get('SELECT 1 AS one'), DbError, 'unavailable');
        expect(performance.now() - started).toBeLessThan(3_500);
      }
    } finally {
      cluster.startServer();
    }
    expect(db.get('SELECT 1 AS one')).toEqual({ one: 1 });
  });

  it('a transaction cut by a restart fails as unavailable and is not continued on the new connection', async () => {
    const db = new Database(await connectPg(cluster.url, { deadlineMs: 3_000 }));
    db.exec('DROP TABLE IF EXISTS cut; CREATE TABLE cut (n INT)');
    expectErrorSync(
      () =>
        db.transaction(() => {
          db.run('INSERT INTO cut (n) VALUES (?)', [1]);
          cluster.restart();
          db.run('INSERT INTO cut (n) VALUES (?)', [2]);
        }),
      DbError,
      'unavailable',
    );
    expect(db.inTransaction).toBe(false);
    expect(db.all('SELECT n FROM cut')).toEqual([]);
    db.transaction(() => db.run('INSERT INTO cut (n) VALUES (?)', [3]));
    expect(db.all('SELECT n FROM cut')).toEqual([{ n: 3 }]);
  });
});

describe('the oldest server agentbus runs on', () => {
  // No server older than 14 is at hand, so the minimum is raised above this cluster's version: the
  // real server, its real version query, the refusal path agentbus takes with an older one.
  it('a server older than the minimum is refused at the first call, naming its version and the fix, and nothing runs', async () => {
    const url = await freshDatabase();
    const settings = { url, statementTimeoutMs: 5_000, lockTimeoutMs: 2_000, connectTimeoutMs: 5_000, minimumServerVersion: 990_000 };
    const db = closeAfterTest(new Database(new PostgresConnection(new Bridge(settings, 'the test cluster'), 'the test cluster', POSTGRES_CAPABILITIES, 10_000)));
    const error = expectErrorSync(() => db.exec('CREATE TABLE should_not_exist (x INTEGER)'), DbError, 'driver_unavailable');
    expect(error.message).toMatch(/runs version \d+.*older than 99.*upgrade the server/);
    const plain = new Database(await connectPg(url));
    expect(plain.get("SELECT to_regclass('should_not_exist') IS NULL AS missing")).toEqual({ missing: 1 });
  });
});
