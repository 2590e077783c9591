import { describe, expect, it } from 'vitest';
import { runFixture, startFixture, waitForExit, waitForLine } from '../support/child-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

describe('many OS processes on one file', () => {
  it('4 processes x 500 single-row write transactions give exactly 2,000 rows', async () => {
    const dir = tempDir();
    (await openTestDatabase(dir)).db.close();
    const results = await Promise.all(
      [0, 1, 2, 3].map((i) => runFixture('db-child.js', ['write', dir, '500', `w${i}`], {}, 120_000)),
    );
    for (const r of results) expect(r.code, r.stderr + r.stdout).toBe(0);
    const { db } = await openTestDatabase(dir);
    expect(db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 2000 });
    expect(db.all('SELECT tag, count(DISTINCT n) AS n FROM t GROUP BY tag ORDER BY tag')).toEqual(
      [0, 1, 2, 3].map((i) => ({ tag: `w${i}`, n: 500 })),
    );
    expect(db.pragma('integrity_check')).toBe('ok');
    db.close();
  });

  it('commits of processes that open, write and close between two looks are all seen, and writes after them keep them', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, n INTEGER NOT NULL)');
    const seen: number[] = [];
    for (let round = 0; round < 4; round++) {
      // Two short-lived writers in a row, each gone before this connection looks again.
      for (const tag of [`a${round}`, `b${round}`]) {
        const child = await runFixture('db-child.js', ['write', dir, '1', tag]);
        expect(child.code, child.stderr + child.stdout).toBe(0);
      }
      // A write transaction here, as a receive is: it must see both commits and not write over them.
      const count = db.transaction(() => {
        db.run("INSERT INTO t (tag, n) VALUES ('reader', ?)", [round]);
        return (db.get<{ n: number }>("SELECT count(*) AS n FROM t WHERE tag <> 'reader'") as { n: number }).n;
      });
      seen.push(count);
    }
    expect(seen).toEqual([2, 4, 6, 8]);
    db.close();
    const fresh = (await openTestDatabase(dir)).db;
    expect(fresh.get('SELECT count(*) AS n FROM t')).toEqual({ n: 12 });
    expect(fresh.pragma('integrity_check')).toBe('ok');
    fresh.close();
  });

  it('a process killed with SIGKILL inside a transaction leaves the next opener working', async () => {
    const dir = tempDir();
    const child = startFixture('db-child.js', ['crash', dir, '50']);
    await waitForLine(child, 'inside');
    child.kill('SIGKILL');
    const exit = await waitForExit(child);
    expect(exit.signal).toBe('SIGKILL');

    const { db } = await openTestDatabase(dir, { busyTimeoutMs: 5_000 });
    expect(db.get("SELECT count(*) AS n FROM t WHERE tag = 'committed'")).toEqual({ n: 50 });
    expect(db.get("SELECT count(*) AS n FROM t WHERE tag = 'uncommitted'")).toEqual({ n: 0 });
    expect(db.pragma('integrity_check')).toBe('ok');
    // The write lock the dead process held is usable again.
    db.transaction(() => db.run("INSERT INTO t (tag, n) VALUES ('after', 1)"));
    expect(db.get("SELECT count(*) AS n FROM t WHERE tag = 'after'")).toEqual({ n: 1 });
    db.close();
  });
});
