/**
 * The Driver contract of src/db/contract/driver.ts, checked on `Connection` and
 * `Statement` directly (not through Database or the bus), once per driver
 * project: the values that go in and come out, how parameters bind, what
 * prepare accepts, the life cycle of statements and connections, and the
 * codes of errors.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DbError, type DbErrorCode } from '../../src/db/contract/db-error.js';
import type { BindParams, Connection, Row } from '../../src/db/contract/driver.js';
import { expectErrorSync } from '../support/expect-error.js';
import { tempDir, testDriver } from '../support/test-driver.js';

async function connect(options: { dir?: string; busyTimeoutMs?: number } = {}): Promise<Connection> {
  const driver = await testDriver();
  return driver.open(join(options.dir ?? tempDir(), 'contract.db'), { busyTimeoutMs: options.busyTimeoutMs ?? 2_000 });
}

/** The DbError `fn` throws, with `code`; fails the test when it throws something else or nothing. */
function thrown(fn: () => unknown, code: DbErrorCode): Error {
  return expectErrorSync(fn, DbError, code);
}

/** `SELECT typeof(?) AS t, ? AS v` for one value. */
function roundTrip(conn: Connection, value: unknown): Row | undefined {
  const stmt = conn.prepare('SELECT typeof(?1) AS t, ?1 AS v');
  try {
    return stmt.get([value] as BindParams);
  } finally {
    stmt.finalize();
  }
}

const MAX = Number.MAX_SAFE_INTEGER;

describe('values coming out', () => {
  it('are plain objects of null, numbers, strings and Uint8Arrays', async () => {
    const conn = await connect();
    const stmt = conn.prepare(
      `SELECT NULL AS n, 0 AS zero, -1 AS neg, ${MAX} AS max, -${MAX} AS min, 2.5 AS f, -0.25 AS nf,
              'a' AS t, '' AS empty, x'00ff' AS b, x'' AS eb, zeroblob(0) AS zb`,
    );
    const row = stmt.get();
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row).toMatchObject({ n: null, zero: 0, neg: -1, max: MAX, min: -MAX, f: 2.5, nf: -0.25, t: 'a', empty: '' });
    for (const key of ['b', 'eb', 'zb']) expect(row?.[key]).toBeInstanceOf(Uint8Array);
    expect(Array.from(row?.b as Uint8Array)).toEqual([0, 255]);
    expect((row?.eb as Uint8Array).length).toBe(0);
    expect((row?.zb as Uint8Array).length).toBe(0);
    conn.close();
  });

  it('an integer beyond ±(2^53-1) throws integer_range (never rounded, never a bigint), and CAST AS TEXT reads it', async () => {
    const conn = await connect();
    for (const sql of ['SELECT 9007199254740992 AS x', 'SELECT -9007199254740992 AS x', 'SELECT 9223372036854775807 AS x']) {
      const stmt = conn.prepare(sql);
      expect(thrown(() => stmt.get(), 'integer_range').message).toMatch(/CAST/);
      expect(thrown(() => stmt.all(), 'integer_range').message).toMatch(/CAST/);
      stmt.finalize();
    }
    conn.exec('CREATE TABLE big (x INTEGER)');
    const insert = conn.prepare('INSERT INTO big VALUES (?)');
    insert.run([2n ** 62n]);
    insert.run([-(2n ** 63n)]);
    insert.finalize();
    const text = conn.prepare('SELECT CAST(x AS TEXT) AS x FROM big ORDER BY x');
    expect(text.all()).toEqual([{ x: '-9223372036854775808' }, { x: '4611686018427387904' }]);
    text.finalize();
    conn.close();
  });

  it('a read that throws leaves the statement reset: no lock is held and it runs again', async () => {
    const dir = tempDir();
    const conn = await connect({ dir });
    conn.exec('CREATE TABLE big (x INTEGER); INSERT INTO big VALUES (1), (9007199254740993)');
    const all = conn.prepare('SELECT x FROM big ORDER BY rowid');
    thrown(() => all.all(), 'integer_range');
    const first = conn.prepare('SELECT x FROM big ORDER BY rowid');
    expect(first.get()).toEqual({ x: 1 });
    // A statement still holding its read would make this writer's exclusive lock wait and fail.
    const other = await connect({ dir, busyTimeoutMs: 100 });
    other.exec('BEGIN EXCLUSIVE; DELETE FROM big WHERE x = 1; COMMIT');
    thrown(() => all.all(), 'integer_range');
    expect(conn.inTransaction).toBe(false);
    other.close();
    conn.close();
  });

  it('run() discards rows unread, so an out-of-range value in them does not throw', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT 9007199254740993 AS x');
    expect(stmt.run().changes).toBe(0);
    stmt.finalize();
    conn.close();
  });

  it('lastInsertRowid beyond ±(2^53-1) throws integer_range when read; the insert itself succeeded', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE r (v TEXT)');
    const insert = conn.prepare('INSERT INTO r (rowid, v) VALUES (?, ?)');
    const result = insert.run([2n ** 60n, 'huge']);
    expect(result.changes).toBe(1);
    thrown(() => result.lastInsertRowid, 'integer_range');
    // last_insert_rowid() is connection state: an UPDATE after it still runs and reports its changes.
    const update = conn.prepare("UPDATE r SET v = 'seen'");
    expect(update.run().changes).toBe(1);
    expect(insert.run([7, 'small']).lastInsertRowid).toBe(7);
    insert.finalize();
    update.finalize();
    conn.close();
  });
});

describe('values going in', () => {
  it('each kind binds as the SQLite type the contract names', async () => {
    const conn = await connect();
    const cases: [unknown, string, unknown][] = [
      [null, 'null', null],
      [0, 'integer', 0],
      [-7, 'integer', -7],
      [MAX, 'integer', MAX],
      [-MAX, 'integer', -MAX],
      [2.5, 'real', 2.5],
      [-0.125, 'real', -0.125],
      [2 ** 53, 'real', 2 ** 53],
      [1e300, 'real', 1e300],
      [Number.NaN, 'null', null],
      [42n, 'integer', 42],
      ['text', 'text', 'text'],
      ['', 'text', ''],
      ['é😀𝄞', 'text', 'é😀𝄞'],
    ];
    for (const [value, type, back] of cases) expect(roundTrip(conn, value), String(value)).toEqual({ t: type, v: back });
    conn.close();
  });

  it('integers bind as INTEGER: integer division, JSON text and concatenation agree between drivers', async () => {
    const conn = await connect();
    const stmt = conn.prepare("SELECT ? / 2 AS half, json_object('n', ?) AS json, 'n=' || ? AS text");
    expect(stmt.get([5, 5, 5])).toEqual({ half: 2, json: '{"n":5}', text: 'n=5' });
    stmt.finalize();
    conn.close();
  });

  it('bigints bind exactly within 64 bits and throw integer_range beyond', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT typeof(?1) AS t, CAST(?1 AS TEXT) AS v');
    expect(stmt.get([2n ** 63n - 1n])).toEqual({ t: 'integer', v: '9223372036854775807' });
    expect(stmt.get([-(2n ** 63n)])).toEqual({ t: 'integer', v: '-9223372036854775808' });
    thrown(() => stmt.get([2n ** 63n]), 'integer_range');
    thrown(() => stmt.get([-(2n ** 63n) - 1n]), 'integer_range');
    stmt.finalize();
    conn.close();
  });

  it('blobs bind as BLOB, an empty one as a zero-length blob (not NULL), and come back as Uint8Array', async () => {
    const conn = await connect();
    for (const blob of [new Uint8Array([0, 1, 255]), Buffer.from([9, 0, 9]), new Uint8Array(0)]) {
      const row = roundTrip(conn, blob);
      expect(row?.t).toBe('blob');
      expect(row?.v).toBeInstanceOf(Uint8Array);
      expect(Array.from(row?.v as Uint8Array)).toEqual(Array.from(blob));
    }
    conn.close();
  });

  it('column names, parameter names and error messages keep non-ASCII text', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT :prénom AS "naïve 😀", 1 AS "日本"');
    expect(stmt.get({ prénom: 'Zoë' })).toEqual({ 'naïve 😀': 'Zoë', 日本: 1 });
    stmt.finalize();
    expect(thrown(() => conn.prepare('SELECT * FROM "tâble😀"'), 'sql').message).toContain('tâble😀');
    conn.close();
  });

  it('text round-trips exactly through a table: non-BMP characters, combining marks, long text', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (v)');
    const values = ['😀', 'e\u0301', 'x'.repeat(100_000), '\u{10FFFF}', 'tab\there\nnewline'];
    const insert = conn.prepare('INSERT INTO t (v) VALUES (?)');
    for (const v of values) insert.run([v]);
    insert.finalize();
    const read = conn.prepare('SELECT v, typeof(v) AS t FROM t ORDER BY rowid');
    expect(read.all()).toEqual(values.map((v) => ({ v, t: 'text' })));
    read.finalize();
    conn.close();
  });

  it('text containing U+0000 throws bind (SQLite text and node:sqlite stop at it) and nothing is written', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (v)');
    const insert = conn.prepare('INSERT INTO t (v) VALUES (?)');
    expect(thrown(() => insert.run(['a\u0000b']), 'bind').message).toMatch(/U\+0000.*blob/);
    const named = conn.prepare('INSERT INTO t (v) VALUES (:v)');
    expect(thrown(() => named.run({ v: '\u0000' }), 'bind').message).toMatch(/"v"/);
    // As a blob the same bytes are kept whole.
    insert.run([new TextEncoder().encode('a\u0000b')]);
    const read = conn.prepare('SELECT length(v) AS n, count(*) AS c FROM t');
    expect(read.get()).toEqual({ n: 3, c: 1 });
    for (const s of [insert, named, read]) s.finalize();
    conn.close();
  });

  it('undefined, booleans and other objects throw bind, naming the parameter', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT ? AS a');
    expect(thrown(() => stmt.get([undefined] as unknown as BindParams), 'bind').message).toMatch(/parameter 1.*null/);
    expect(thrown(() => stmt.get([true] as unknown as BindParams), 'bind').message).toMatch(/1 or 0/);
    thrown(() => stmt.get([{}] as unknown as BindParams), 'bind');
    thrown(() => stmt.get([new Date()] as unknown as BindParams), 'bind');
    const named = conn.prepare('SELECT :when AS a');
    expect(thrown(() => named.get({ when: undefined } as unknown as BindParams), 'bind').message).toMatch(/"when"/);
    expect(stmt.get([1])).toEqual({ a: 1 });
    stmt.finalize();
    named.finalize();
    conn.close();
  });
});

describe('parameters', () => {
  it('positional: exactly one value per parameter, by index', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT ? AS a, ? AS b');
    expect(stmt.get([1, 'x'])).toEqual({ a: 1, b: 'x' });
    expect(stmt.get([null, null])).toEqual({ a: null, b: null });
    expect(thrown(() => stmt.get([1]), 'bind').message).toMatch(/1 value given for 2 parameters/);
    expect(thrown(() => stmt.get([1, 2, 3]), 'bind').message).toMatch(/3 values given for 2 parameters/);
    expect(thrown(() => stmt.get(), 'bind').message).toMatch(/no values/);
    expect(thrown(() => stmt.get({ a: 1, b: 2 }), 'bind').message).toMatch(/pass an array/);
    const numbered = conn.prepare('SELECT ?2 AS second, ?1 AS first, ?2 AS again');
    expect(numbered.get([10, 20])).toEqual({ second: 20, first: 10, again: 20 });
    thrown(() => numbered.get([10]), 'bind');
    stmt.finalize();
    numbered.finalize();
    conn.close();
  });

  it('named: every parameter needs an own key, unknown keys throw, any of : @ $ works', async () => {
    const conn = await connect();
    const stmt = conn.prepare('SELECT :a AS a, @b AS b, $c AS c, :a + 1 AS a1');
    expect(stmt.get({ a: 1, b: 'two', c: null })).toEqual({ a: 1, b: 'two', c: null, a1: 2 });
    expect(thrown(() => stmt.get({ a: 1, b: 2 }), 'bind').message).toMatch(/missing named parameter \$c/);
    expect(thrown(() => stmt.get({ a: 1, b: 2, c: 3, d: 4 }), 'bind').message).toMatch(/unknown named parameter "d"/);
    expect(thrown(() => stmt.get({ ':a': 1, b: 2, c: 3 }), 'bind').message).toMatch(/bare names: "a"/);
    expect(thrown(() => stmt.get([1, 2, 3]), 'bind').message).toMatch(/pass an object/);
    expect(thrown(() => stmt.get(), 'bind').message).toMatch(/no values/);
    // Nothing carries over from an earlier call.
    expect(stmt.get({ a: 5, b: null, c: null })).toEqual({ a: 5, b: null, c: null, a1: 6 });
    stmt.finalize();
    conn.close();
  });

  it('a statement mixing ? and :name cannot be bound; one naming a parameter with two prefixes takes no object', async () => {
    const conn = await connect();
    const mixed = conn.prepare('SELECT ? AS a, :b AS b');
    expect(thrown(() => mixed.get({ b: 1 }), 'bind').message).toMatch(/mixes/);
    thrown(() => mixed.get([1, 2]), 'bind');
    const twice = conn.prepare('SELECT :a AS x, @a AS y');
    expect(thrown(() => twice.get({ a: 1 }), 'bind').message).toMatch(/:a and @a/);
    mixed.finalize();
    twice.finalize();
    conn.close();
  });

  it('text that only looks like a parameter (strings, quoted names, comments) is not one', async () => {
    const conn = await connect();
    const stmt = conn.prepare(
      `SELECT ':no' AS s, 'it''s @no ?' AS q, 1 AS "c:no", 2 AS [e:no], 3 AS \`f?\`, x'3f' AS b -- :no ?
       /* $no ? */, :yes AS y, a$b.x AS z FROM (SELECT 4 AS x) AS a$b`,
    );
    expect(stmt.get({ yes: 'y' })).toEqual({ s: ':no', q: "it's @no ?", 'c:no': 1, 'e:no': 2, 'f?': 3, b: new Uint8Array([0x3f]), y: 'y', z: 4 });
    thrown(() => stmt.get([1]), 'bind');
    stmt.finalize();
    conn.close();
  });

  it('a failed bind changes nothing: the statement runs afterwards and nothing was written', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (a, b)');
    const insert = conn.prepare('INSERT INTO t VALUES (:a, :b)');
    thrown(() => insert.run({ a: 1 }), 'bind');
    thrown(() => insert.run({ a: 1, b: true } as unknown as BindParams), 'bind');
    expect(insert.run({ a: 1, b: 2 }).changes).toBe(1);
    const count = conn.prepare('SELECT count(*) AS n FROM t');
    expect(count.get()).toEqual({ n: 1 });
    insert.finalize();
    count.finalize();
    conn.close();
  });
});

describe('prepare', () => {
  it('takes exactly one statement; comments, whitespace and semicolons around it are fine', async () => {
    const conn = await connect();
    for (const sql of ['SELECT 1 AS x', 'SELECT 1 AS x;', '  -- lead\n SELECT 1 AS x ; -- trail', '/* a */ SELECT 1 AS x /* b */ ;;  ', '; SELECT 1 AS x']) {
      const stmt = conn.prepare(sql);
      expect(stmt.get(), sql).toEqual({ x: 1 });
      stmt.finalize();
    }
    conn.close();
  });

  it('text with a second statement throws statement_count, and none of it runs', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (x)');
    expect(thrown(() => conn.prepare('INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)'), 'statement_count').message).toMatch(
      /INSERT INTO t VALUES \(2\).*exec\(\)/,
    );
    thrown(() => conn.prepare('SELECT 1; SELECT 2'), 'statement_count');
    thrown(() => conn.prepare("SELECT ';' AS s; -- c\n SELECT 2"), 'statement_count');
    const count = conn.prepare('SELECT count(*) AS n FROM t');
    expect(count.get()).toEqual({ n: 0 });
    expect(conn.openStatements).toBe(1);
    count.finalize();
    conn.close();
  });

  it('text without a statement throws statement_count; a syntax error throws sql', async () => {
    const conn = await connect();
    for (const sql of ['', '   ', '-- nothing', '/* nothing */ ;']) thrown(() => conn.prepare(sql), 'statement_count');
    thrown(() => conn.prepare('SELEC 1'), 'sql');
    thrown(() => conn.prepare('SELECT * FROM missing_table'), 'sql');
    expect(conn.openStatements).toBe(0);
    conn.close();
  });
});

describe('life cycle', () => {
  it('finalize is idempotent; a finalized statement throws closed; openStatements counts the open ones', async () => {
    const conn = await connect();
    expect(conn.openStatements).toBe(0);
    const a = conn.prepare('SELECT 1 AS x');
    const b = conn.prepare('SELECT 2 AS x');
    expect(conn.openStatements).toBe(2);
    a.finalize();
    a.finalize();
    expect(conn.openStatements).toBe(1);
    thrown(() => a.get(), 'closed');
    thrown(() => a.all(), 'closed');
    thrown(() => a.run(), 'closed');
    expect(b.get()).toEqual({ x: 2 });
    b.finalize();
    expect(conn.openStatements).toBe(0);
    conn.close();
  });

  it('close finalizes open statements: they throw closed, the connection throws closed, close is idempotent', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (x)');
    const read = conn.prepare('SELECT x FROM t');
    const write = conn.prepare('INSERT INTO t VALUES (?)');
    write.run([1]);
    conn.close();
    expect(conn.openStatements).toBe(0);
    thrown(() => read.all(), 'closed');
    thrown(() => write.run([2]), 'closed');
    read.finalize();
    conn.close();
    thrown(() => conn.exec('SELECT 1'), 'closed');
    thrown(() => conn.prepare('SELECT 1'), 'closed');
    thrown(() => conn.inTransaction, 'closed');
  });

  it('the data written before close is there for the next connection', async () => {
    const dir = tempDir();
    const conn = await connect({ dir });
    conn.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    const open = conn.prepare('SELECT x FROM t');
    open.get();
    conn.close();
    const again = await connect({ dir });
    const read = again.prepare('SELECT x FROM t');
    expect(read.all()).toEqual([{ x: 1 }]);
    read.finalize();
    again.close();
  });
});

describe('exec', () => {
  it('runs several statements in order, rows discarded, and takes none of them to openStatements', async () => {
    const conn = await connect();
    conn.exec(`CREATE TABLE t (x INTEGER PRIMARY KEY);
      INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);
      SELECT * FROM t; -- rows are stepped and dropped
      UPDATE t SET x = x + 10;`);
    conn.exec('');
    conn.exec('  -- nothing ;');
    expect(conn.openStatements).toBe(0);
    const read = conn.prepare('SELECT x FROM t ORDER BY x');
    expect(read.all()).toEqual([{ x: 11 }, { x: 12 }]);
    read.finalize();
    conn.close();
  });

  it('stops at the first failure with its code; the statements before it stay applied', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    thrown(() => conn.exec('INSERT INTO t VALUES (1); INSERT INTO t VALUES (1); INSERT INTO t VALUES (3)'), 'constraint');
    thrown(() => conn.exec('INSERT INTO t VALUES (4); SELEC oops; INSERT INTO t VALUES (5)'), 'sql');
    const read = conn.prepare('SELECT x FROM t ORDER BY x');
    expect(read.all()).toEqual([{ x: 1 }, { x: 4 }]);
    read.finalize();
    conn.close();
  });

  it('binds nothing: text with a parameter throws bind before any of it runs', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE t (x)');
    thrown(() => conn.exec('INSERT INTO t VALUES (1); INSERT INTO t VALUES (?)'), 'bind');
    thrown(() => conn.exec('INSERT INTO t VALUES (:x)'), 'bind');
    // A parameter after text that hides marks (strings, quoted names, comments) is still one.
    for (const sql of [
      "INSERT INTO t VALUES ('--'); INSERT INTO t VALUES (?)",
      "INSERT INTO t VALUES ('it''s'); /* ' */ INSERT INTO t VALUES (@x)",
      'INSERT INTO t SELECT 1 AS "a""b" -- \'\nWHERE $x',
      'INSERT INTO t SELECT 1 AS [a/*] WHERE #x',
      "INSERT INTO t VALUES (:x(it's))",
    ]) {
      thrown(() => conn.exec(sql), 'bind');
    }
    conn.exec("INSERT INTO t VALUES (':not a parameter?')");
    conn.exec("INSERT INTO t SELECT 'it''s @no ?' AS \"c:no\" -- :no ?\n /* $no ? */ FROM (SELECT 1 AS [e:no], 2 AS `f?`) AS a$b");
    conn.exec('INSERT INTO t VALUES (2) /* ? unclosed');
    const read = conn.prepare('SELECT x FROM t');
    expect(read.all()).toEqual([{ x: ':not a parameter?' }, { x: "it's @no ?" }, { x: 2 }]);
    read.finalize();
    conn.close();
  });
});

describe('errors and transactions', () => {
  it('constraint failures carry code constraint and the extended SQLite code', async () => {
    const conn = await connect();
    conn.exec('CREATE TABLE u (x INTEGER PRIMARY KEY, y TEXT NOT NULL, z INTEGER CHECK (z > 0))');
    const insert = conn.prepare('INSERT INTO u VALUES (?, ?, ?)');
    insert.run([1, 'a', 1]);
    const unique = thrown(() => insert.run([1, 'b', 1]), 'constraint') as Error & { sqliteCode?: number };
    expect(unique.sqliteCode).toBe(1555); // SQLITE_CONSTRAINT_PRIMARYKEY
    expect((thrown(() => insert.run([2, null, 1]), 'constraint') as Error & { sqliteCode?: number }).sqliteCode).toBe(1299); // NOTNULL
    expect((thrown(() => insert.run([3, 'c', 0]), 'constraint') as Error & { sqliteCode?: number }).sqliteCode).toBe(275); // CHECK
    expect(insert.run([2, 'b', 2]).changes).toBe(1);
    insert.finalize();
    conn.close();
  });

  it('a write lock held by another connection past the timeout is code busy', async () => {
    const dir = tempDir();
    const holder = await connect({ dir });
    const waiter = await connect({ dir, busyTimeoutMs: 50 });
    holder.exec('CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
    thrown(() => waiter.exec('BEGIN IMMEDIATE'), 'busy');
    expect(waiter.inTransaction).toBe(false);
    holder.exec('COMMIT');
    waiter.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT');
    holder.close();
    waiter.close();
  });

  it('inTransaction follows BEGIN/COMMIT and turns false when SQLite rolls back by itself', async () => {
    const conn = await connect();
    conn.exec(`CREATE TABLE t (x INTEGER PRIMARY KEY);
      CREATE TRIGGER veto BEFORE INSERT ON t WHEN new.x < 0 BEGIN SELECT RAISE(ROLLBACK, 'negative x rolls back'); END;`);
    expect(conn.inTransaction).toBe(false);
    conn.exec('BEGIN');
    expect(conn.inTransaction).toBe(true);
    conn.exec('COMMIT');
    expect(conn.inTransaction).toBe(false);

    const insert = conn.prepare('INSERT INTO t VALUES (?)');
    conn.exec('BEGIN; SAVEPOINT s');
    insert.run([1]);
    expect(thrown(() => insert.run([-1]), 'constraint').message).toMatch(/negative x rolls back/);
    expect(conn.inTransaction).toBe(false);

    conn.exec('BEGIN');
    insert.run([2]);
    const orRollback = conn.prepare('INSERT OR ROLLBACK INTO t VALUES (?)');
    thrown(() => orRollback.run([2]), 'constraint');
    expect(conn.inTransaction).toBe(false);

    const count = conn.prepare('SELECT count(*) AS n FROM t');
    expect(count.get()).toEqual({ n: 0 });
    for (const s of [insert, orRollback, count]) s.finalize();
    conn.close();
  });
});
