import { describe, expect, it } from 'vitest';
import { DbError } from '../../src/db/contract/db-error.js';
import { startFixture, waitForExit, waitForLine } from '../support/child-process.js';
import { expectErrorSync } from '../support/expect-error.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

describe('transactions', () => {
  it('rolls back everything when the callback throws', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE r (x INTEGER)');
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO r VALUES (1)');
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(db.get('SELECT count(*) AS n FROM r')).toEqual({ n: 0 });
    expect(db.inTransaction).toBe(false);
    db.close();
  });

  it('rejects a callback that returns a promise with a TypeError and rolls back', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE r (x INTEGER)');
    expect(() =>
      db.transaction(async () => {
        db.run('INSERT INTO r VALUES (1)');
      }),
    ).toThrow(TypeError);
    expect(db.get('SELECT count(*) AS n FROM r')).toEqual({ n: 0 });
    db.close();
  });

  it('nests with savepoints: an inner failure keeps the outer work', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE r (x INTEGER)');
    db.transaction(() => {
      db.run('INSERT INTO r VALUES (1)');
      expect(() =>
        db.transaction(() => {
          db.run('INSERT INTO r VALUES (2)');
          throw new Error('inner');
        }),
      ).toThrow('inner');
    });
    expect(db.all('SELECT x FROM r')).toEqual([{ x: 1 }]);
    db.close();
  });

  it('a nested transaction that SQLite rolled back by itself throws its own error, not "no such savepoint"', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec(`CREATE TABLE r (x INTEGER PRIMARY KEY);
      CREATE TRIGGER veto BEFORE INSERT ON r WHEN new.x < 0 BEGIN SELECT RAISE(ROLLBACK, 'negative x rolls everything back'); END;`);
    const attempts: [string, () => void, RegExp][] = [
      ['RAISE(ROLLBACK) in a trigger', () => db.run('INSERT INTO r VALUES (-1)'), /negative x rolls everything back/],
      ['INSERT OR ROLLBACK on a conflict', () => db.run('INSERT OR ROLLBACK INTO r VALUES (1)'), /UNIQUE|PRIMARY KEY/i],
    ];
    for (const [what, fail, message] of attempts) {
      const error = expectErrorSync(
        () =>
          db.transaction(() => {
            db.run('INSERT INTO r VALUES (1)');
            db.transaction(fail);
          }),
        DbError,
        'constraint',
      );
      expect(error.message, what).toMatch(message);
      expect(db.inTransaction, what).toBe(false);
      expect(db.get('SELECT count(*) AS n FROM r'), what).toEqual({ n: 0 });
    }
    // The connection is left usable, in and out of transactions.
    db.transaction(() => db.transaction(() => db.run('INSERT INTO r VALUES (2)')));
    expect(db.all('SELECT x FROM r')).toEqual([{ x: 2 }]);
    db.close();
  });

  it('an outer transaction that SQLite rolled back by itself throws its own error', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE r (x INTEGER PRIMARY KEY)');
    db.run('INSERT INTO r VALUES (1)');
    expectErrorSync(
      () =>
        db.transaction(() => {
          db.run('INSERT INTO r VALUES (2)');
          db.run('INSERT OR ROLLBACK INTO r VALUES (1)');
        }),
      DbError,
      'constraint',
    );
    expect(db.all('SELECT x FROM r')).toEqual([{ x: 1 }]);
    db.close();
  });

  it('returns plain row objects and numbers', async () => {
    const { db } = await openTestDatabase(tempDir());
    const row = db.get<Record<string, unknown>>("SELECT 1 AS one, 'a' AS s, x'00ff' AS b, NULL AS z, 2.5 AS f");
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row?.one).toBe(1);
    expect(row?.s).toBe('a');
    expect(Array.from(row?.b as Uint8Array)).toEqual([0, 255]);
    expect(row?.z).toBe(null);
    expect(row?.f).toBe(2.5);
    expect(db.get('SELECT :a + :b AS n', { a: 2, b: 3 })).toEqual({ n: 5 });
    db.close();
  });

  it('maps constraint and syntax failures to codes', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE u (x INTEGER PRIMARY KEY)');
    db.run('INSERT INTO u VALUES (1)');
    expectErrorSync(() => db.run('INSERT INTO u VALUES (1)'), DbError, 'constraint');
    expect(() => db.prepare('SELEC nonsense')).toThrow(expect.objectContaining({ code: 'sql' }));
    db.close();
  });

  it('two connections in one process: the second gets code busy after its timeout, not a generic error', async () => {
    const dir = tempDir();
    const { db: a } = await openTestDatabase(dir);
    const { db: b } = await openTestDatabase(dir, { busyTimeoutMs: 100 });
    a.exec('CREATE TABLE c (x INTEGER)');
    a.exec('BEGIN IMMEDIATE');
    a.run('INSERT INTO c VALUES (1)');
    const started = Date.now();
    expectErrorSync(() => b.transaction(() => b.run('INSERT INTO c VALUES (2)')), DbError, 'busy');
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    // A writer holding the write lock before commit does not block readers (WAL, or RESERVED in a rollback journal).
    expect(b.get('SELECT count(*) AS n FROM c')).toEqual({ n: 0 });
    a.exec('COMMIT');
    b.transaction(() => b.run('INSERT INTO c VALUES (2)'));
    expect(a.get('SELECT count(*) AS n FROM c')).toEqual({ n: 2 });
    a.close();
    b.close();
  });

  it('two processes contending: the waiter is served by busy handling once the holder commits', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, n INTEGER NOT NULL)');
    const holder = startFixture('db-child.js', ['hold', dir, '600']);
    await waitForLine(holder, 'locked');
    const started = Date.now();
    db.transaction(() => db.run("INSERT INTO t (tag, n) VALUES ('waiter', 1)"));
    const waited = Date.now() - started;
    const result = await waitForExit(holder);
    expect(result.code, result.stderr).toBe(0);
    expect(waited).toBeGreaterThan(100);
    expect(db.all('SELECT tag FROM t ORDER BY id')).toEqual([{ tag: 'holder' }, { tag: 'waiter' }]);
    db.close();
  });

  // The native driver waits for locks itself where a refused call can be made again, and leaves
  // the rest to SQLite's handler (drivers/native/lock-wait.ts): each kind of call meets a held
  // write lock once, and what it writes is applied exactly once.
  it('each kind of call that meets another process\'s write lock waits for it and applies once', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, n INTEGER NOT NULL)');
    const calls: Array<[string, () => unknown]> = [
      ['begin', () => db.transaction(() => db.run("INSERT INTO t (tag, n) VALUES ('begin', 1)"))],
      ['autocommit', () => db.run("INSERT INTO t (tag, n) VALUES ('autocommit', 1)")],
      ['two statements', () => db.exec("INSERT INTO t (tag, n) VALUES ('first', 1); INSERT INTO t (tag, n) VALUES ('second', 1)")],
      // A checkpoint waits inside SQLite and reports in its row whether it finished.
      ['checkpoint', () => expect(db.get('PRAGMA wal_checkpoint(TRUNCATE)')).toMatchObject({ busy: 0 })],
    ];
    for (const [, call] of calls) {
      const holder = startFixture('db-child.js', ['hold', dir, '150']);
      await waitForLine(holder, 'locked');
      call();
      const result = await waitForExit(holder);
      expect(result.code, result.stderr).toBe(0);
    }
    expect(db.all("SELECT tag, count(*) AS n FROM t WHERE tag != 'holder' GROUP BY tag ORDER BY tag")).toEqual([
      { tag: 'autocommit', n: 1 },
      { tag: 'begin', n: 1 },
      { tag: 'first', n: 1 },
      { tag: 'second', n: 1 },
    ]);
    expect(db.get("SELECT count(*) AS n FROM t WHERE tag = 'holder'")).toEqual({ n: 4 });
    db.close();
  });
});
