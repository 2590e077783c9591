/**
 * The native driver's inTransaction on a node:sqlite without `isTransaction`
 * (Node 22.13-22.15) probes with a deferred BEGIN. Checked here against
 * `isTransaction` of this Node, state by state, on a real file.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeTransaction } from '../../drivers/native/native-driver.js';
import { tempDir } from '../support/test-driver.js';

describe('probeTransaction', () => {
  it('agrees with isTransaction in autocommit, inside BEGIN and SAVEPOINT, and after SQLite rolled back by itself', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(join(tempDir(), 'probe.db'));
    const states: [boolean, boolean][] = [];
    const look = () => states.push([probeTransaction(db), db.isTransaction]);
    db.exec(`CREATE TABLE t (x INTEGER PRIMARY KEY);
      CREATE TRIGGER veto BEFORE INSERT ON t WHEN new.x < 0 BEGIN SELECT RAISE(ROLLBACK, 'no'); END;`);
    look();
    db.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
    look();
    db.exec('SAVEPOINT s');
    look();
    expect(() => db.exec('INSERT INTO t VALUES (-1)')).toThrow(/no/);
    look();
    db.exec('SAVEPOINT outer_only');
    look();
    db.exec('RELEASE outer_only');
    look();
    expect(states).toEqual([
      [false, false],
      [true, true],
      [true, true],
      [false, false],
      [true, true],
      [false, false],
    ]);
    // The probe left nothing behind: the row inserted before the rollback is gone, and no transaction is open.
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    db.close();
  });
});
