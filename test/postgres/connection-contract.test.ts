/**
 * The Driver contract of src/db/contract/driver.ts on the postgres driver, checked on
 * Connection and Statement directly, as test/driver/connection-contract
 * does for SQLite: values in and out, how parameters bind, what prepare
 * accepts, the life cycle of statements and connections, error codes. The
 * two differences the driver declares are checked too (a syntax error
 * surfaces at the first run; no rowid).
 */
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { DbError, type DbErrorCode } from '../../src/db/contract/db-error.js';
import type { BindParams, Connection, DriverCapabilities } from '../../src/db/contract/driver.js';
import { expectErrorSync } from '../support/expect-error.js';
import { connectPg, freshDatabase } from './pg-test.js';

function thrown(fn: () => unknown, code: DbErrorCode): Error {
  return expectErrorSync(fn, DbError, code);
}

async function connect(): Promise<Connection<DriverCapabilities>> {
  return connectPg(await freshDatabase());
}

const MAX = Number.MAX_SAFE_INTEGER;

describe('values coming out', () => {
  it('are plain objects of null, numbers, strings and Uint8Arrays; booleans as 1/0; other types as text', async () => {
    const conn = await connect();
    const row = conn
      .prepare(
        `SELECT NULL AS n, 0 AS zero, -1 AS neg, ${MAX}::int8 AS max, -${MAX}::int8 AS min, 2.5::float8 AS f, -0.25::real AS nf,
                12::numeric AS num, 'a' AS t, '' AS empty, '\\x00ff'::bytea AS b, ''::bytea AS eb, true AS yes, false AS no,
                '2026-01-02'::date AS d, '{"a":1}'::jsonb AS j`,
      )
      .get();
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row).toMatchObject({ n: null, zero: 0, neg: -1, max: MAX, min: -MAX, f: 2.5, nf: -0.25, num: 12, t: 'a', empty: '', yes: 1, no: 0, d: '2026-01-02', j: '{"a": 1}' });
    expect(Array.from(row?.b as Uint8Array)).toEqual([0, 255]);
    expect(row?.eb).toBeInstanceOf(Uint8Array);
    expect((row?.eb as Uint8Array).length).toBe(0);
  });

  it('an integer beyond ±(2^53-1) throws integer_range (never rounded, never a bigint), and CAST AS TEXT reads it', async () => {
    const conn = await connect();
    for (const sql of ['SELECT 9007199254740992::int8 AS x', 'SELECT -9007199254740992::int8 AS x', 'SELECT 9223372036854775807::numeric AS x']) {
      const stmt = conn.prepare(sql);
      expect(thrown(() => stmt.get(), 'integer_range').message).toMatch(/CAST/);
      expect(thrown(() => stmt.all(), 'integer_range').message).toMatch(/CAST/);
    }
    expect(conn.prepare('SELECT CAST(9223372036854775807 AS TEXT) AS x').get()).toEqual({ x: '9223372036854775807' });
  });
});

describe('values going in', () => {
  it('numbers, bigints, strings, blobs and null round-trip through a table', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE v (i BIGINT, r DOUBLE PRECISION, t TEXT, b BYTEA)');
    const insert = conn.prepare('INSERT INTO v (i, r, t, b) VALUES (?, ?, ?, ?)');
    expect(insert.run([MAX, 0.5, 'héllo', new Uint8Array([1, 2, 3])]).changes).toBe(1);
    insert.run([123n, Number.NaN, null, new Uint8Array(0)]);
    const rows = conn.prepare('SELECT i, r, t, b FROM v ORDER BY i').all();
    expect(rows[0]).toMatchObject({ i: 123, r: null, t: null });
    expect((rows[0]?.b as Uint8Array).length).toBe(0);
    expect(rows[1]).toMatchObject({ i: MAX, r: 0.5, t: 'héllo' });
    expect(Array.from(rows[1]?.b as Uint8Array)).toEqual([1, 2, 3]);
  });

  it('refuses undefined, booleans, objects, U+0000 in text and bigints beyond 64 bits before anything runs', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT ?::text AS v');
    for (const value of [undefined, true, {}, 'a\0b']) thrown(() => stmt.get([value] as unknown as BindParams), 'bind');
    thrown(() => conn.prepare('SELECT ?::int8 AS v').get([2n ** 64n]), 'integer_range');
  });
});

describe('parameters', () => {
  it('? and ?NNN bind by index, :name by key, and :: casts or quoted text are not parameters', async () => {
    const conn = await connect();
    expect(conn.prepare('SELECT ?::int AS a, ?::text AS b').get([1, 'x'])).toEqual({ a: 1, b: 'x' });
    expect(conn.prepare('SELECT ?2::text AS a, ?1::text AS b').get(['one', 'two'])).toEqual({ a: 'two', b: 'one' });
    expect(conn.prepare('SELECT :a::int + :a::int AS s, :b::text AS t').get({ a: 2, b: 'y' })).toEqual({ s: 4, t: 'y' });
    expect(conn.prepare(`SELECT '?' AS q, ':x' AS c, "?col".v FROM (SELECT 1 AS v) AS "?col" -- ?`).get()).toEqual({ q: '?', c: ':x', v: 1 });
    expect(conn.prepare(`SELECT $$ ? :x $$ AS d, E'it\\'s ?' AS e`).get()).toEqual({ d: ' ? :x ', e: "it's ?" });
  });

  it('a missing, surplus, unknown or wrongly shaped value throws bind', async () => {
    const conn = await connect();
    thrown(() => conn.prepare('SELECT ?::int AS a').get([]), 'bind');
    thrown(() => conn.prepare('SELECT ?::int AS a').get([1, 2]), 'bind');
    thrown(() => conn.prepare('SELECT ?::int AS a').get(), 'bind');
    thrown(() => conn.prepare('SELECT :a::int AS a').get({}), 'bind');
    thrown(() => conn.prepare('SELECT :a::int AS a').get({ a: 1, b: 2 }), 'bind');
    thrown(() => conn.prepare('SELECT :a::int AS a').get([1]), 'bind');
    thrown(() => conn.prepare('SELECT :a::int AS a, ?::int AS b').get({ a: 1 }), 'bind');
    thrown(() => conn.prepare('SELECT 1 AS a').get([1]), 'bind');
  });

  it('exec() binds nothing and refuses text with a parameter', async () => {
    const conn = await connect();
    thrown(() => conn.exec('SELECT ?'), 'bind');
    conn.exec("CREATE TABLE e (x INT); INSERT INTO e VALUES (1); INSERT INTO e SELECT x + 1 FROM e WHERE '?' = '?'");
    expect(conn.prepare('SELECT count(*)::int AS n FROM e').get()).toEqual({ n: 2 });
  });
});

describe('statements', () => {
  it('prepare() takes exactly one statement', async () => {
    const conn = await connect();
    for (const sql of ['', '  ', '-- only a comment', ';;']) thrown(() => conn.prepare(sql), 'statement_count');
    thrown(() => conn.prepare('SELECT 1; SELECT 2'), 'statement_count');
    expect(conn.prepare('SELECT 1 AS one; -- trailing\n;').get()).toEqual({ one: 1 });
  });

  it('a syntax error or unknown table is `sql` at the first run (the server parses there), a constraint is `constraint`', async () => {
    const conn = await connect();
    const bad = conn.prepare('SELEC 1');
    thrown(() => bad.get(), 'sql');
    thrown(() => conn.prepare('SELECT * FROM nowhere').all(), 'sql');
    conn.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
    const insert = conn.prepare('INSERT INTO u (k) VALUES (?)');
    insert.run(['a']);
    thrown(() => insert.run(['a']), 'constraint');
  });

  it('run() counts changes; there is no rowid, so lastInsertRowid throws sql and RETURNING reads the key', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE r (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, v TEXT)');
    const result = conn.prepare('INSERT INTO r (v) VALUES (?), (?)').run(['a', 'b']);
    expect(result.changes).toBe(2);
    thrown(() => result.lastInsertRowid, 'sql');
    expect(conn.prepare('INSERT INTO r (v) VALUES (?) RETURNING id').get(['c'])).toEqual({ id: 3 });
    expect(conn.prepare('UPDATE r SET v = ? WHERE id > ?').run(['z', 1]).changes).toBe(2);
  });

  it('openStatements counts prepared and not finalized statements; a finalized statement or a closed connection throws closed', async () => {
    const conn = await connect();
    const before = conn.openStatements;
    const a = conn.prepare('SELECT 1 AS x');
    const b = conn.prepare('SELECT 2 AS x');
    expect(conn.openStatements).toBe(before + 2);
    a.finalize();
    a.finalize();
    expect(conn.openStatements).toBe(before + 1);
    thrown(() => a.get(), 'closed');
    conn.close();
    thrown(() => b.get(), 'closed');
    thrown(() => conn.exec('SELECT 1'), 'closed');
    thrown(() => conn.prepare('SELECT 1'), 'closed');
    conn.close();
  });
});

describe('transactions through Database', () => {
  it('inTransaction follows the server; a savepoint undoes only its own part; a throw rolls everything back', async () => {
    const conn = await connect();
    const db = new Database(conn);
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    expect(conn.inTransaction).toBe(false);
    db.transaction(() => {
      expect(conn.inTransaction).toBe(true);
      db.run('INSERT INTO t (k) VALUES (?)', ['a']);
      expect(() => db.transaction(() => db.run('INSERT INTO t (k) VALUES (?)', ['a']))).toThrow(DbError);
      db.run('INSERT INTO t (k) VALUES (?)', ['b']);
    });
    expect(conn.inTransaction).toBe(false);
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO t (k) VALUES (?)', ['c']);
        throw new Error('undo');
      }),
    ).toThrow('undo');
    expect(db.all('SELECT k FROM t ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }]);
    expect(db.read(() => db.get('SELECT count(*)::int AS n FROM t'))).toEqual({ n: 2 });
  });

  it('write transactions of two connections are serialized by the writer lock; a wait past the busy timeout is busy', async () => {
    const url = await freshDatabase();
    const one = new Database(await connectPg(url, { busyTimeoutMs: 300 }));
    const two = new Database(await connectPg(url, { busyTimeoutMs: 300 }));
    one.exec('CREATE TABLE w (n INT)');
    one.transaction(() => {
      one.run('INSERT INTO w (n) VALUES (?)', [1]);
      const started = performance.now();
      thrown(() => two.transaction(() => two.run('INSERT INTO w (n) VALUES (?)', [2])), 'busy');
      expect(performance.now() - started).toBeLessThan(3_000);
    });
    two.transaction(() => two.run('INSERT INTO w (n) VALUES (?)', [2]));
    expect(one.all('SELECT n FROM w ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
