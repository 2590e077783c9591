import { describe, expect, it } from 'vitest';
import { execPolicy, isBusy, statementPolicy } from '../../drivers/native/lock-wait.js';

// Which calls the native driver makes again itself when another connection holds a lock, and which
// it leaves to SQLite's own handler (drivers/native/lock-wait.ts): the classification is pure.
describe('the native driver\'s lock-wait policy', () => {
  it('makes one statement again itself; COMMIT as COMMIT', () => {
    expect(execPolicy('BEGIN IMMEDIATE')).toBe('retry');
    expect(execPolicy('ROLLBACK')).toBe('retry');
    expect(execPolicy('INSERT INTO t VALUES (1);  ')).toBe('retry');
    expect(execPolicy('COMMIT')).toBe('commit');
    expect(execPolicy(' end transaction; ')).toBe('commit');
    expect(statementPolicy('SELECT 1')).toBe('retry');
  });

  it('leaves text that may hold two statements and checkpoints to SQLite', () => {
    expect(execPolicy('BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT')).toBe('sqlite');
    // A semicolon inside a string is enough to be careful: SQLite then waits as it always did.
    expect(execPolicy("INSERT INTO t VALUES ('a;b')")).toBe('sqlite');
    expect(execPolicy('PRAGMA wal_checkpoint(TRUNCATE)')).toBe('sqlite');
    expect(statementPolicy('pragma main.wal_checkpoint(PASSIVE)')).toBe('sqlite');
  });

  it('knows SQLITE_BUSY by its primary code, extended codes included', () => {
    expect(isBusy({ errcode: 5 })).toBe(true);
    expect(isBusy({ errcode: 517 })).toBe(true); // SQLITE_BUSY_SNAPSHOT
    expect(isBusy({ errcode: 6 })).toBe(false); // SQLITE_LOCKED
    expect(isBusy(new Error('busy'))).toBe(false);
    expect(isBusy(undefined)).toBe(false);
  });
});
