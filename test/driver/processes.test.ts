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
