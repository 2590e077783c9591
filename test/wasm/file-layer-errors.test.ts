/**
 * A failure inside the wasm driver's file layer reaches the user with its
 * reason: SQLite only gets a result code from the file layer, so the layer
 * keeps the last failure per file and the connection joins it to the
 * DbError's message and sets it as the cause. Each case provokes a real
 * failure on a real file.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DbError } from '../../src/db/contract/db-error.js';
import { lockTablePath } from '../../src/db/lock-records/portable-lock-files.js';
import { expectError } from '../support/expect-error.js';
import { tempDir, testDriver } from '../support/test-driver.js';

describe('file-layer failures name their reason', () => {
  it('a database path that is a directory: cantopen, with the OS error as cause', async () => {
    const driver = await testDriver();
    const path = join(tempDir(), 'agentbus.db');
    mkdirSync(path);
    const error = await expectError(() => driver.open(path, { busyTimeoutMs: 100 }), DbError);
    expect(error.code).toBe('cantopen');
    expect(error.message).toContain(`cannot open ${path}`);
    expect(error.message).toContain('EISDIR');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EISDIR');
  });

  it('a lock table that cannot be opened: cantopen names the lock table, not just "unable to open"', async () => {
    const driver = await testDriver();
    const path = join(tempDir(), 'agentbus.db');
    mkdirSync(lockTablePath(path));
    const error = await expectError(() => driver.open(path, { busyTimeoutMs: 100 }), DbError);
    expect(error.code).toBe('cantopen');
    expect(error.message).toContain(lockTablePath(path));
    expect((error.cause as Error).message).toContain(lockTablePath(path));
  });

  it('a -wal file that cannot be opened fails the statement, and the error says why', async () => {
    const driver = await testDriver();
    const path = join(tempDir(), 'agentbus.db');
    const setup = driver.open(path, { busyTimeoutMs: 100 });
    setup.exec('PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    setup.close();
    mkdirSync(`${path}-wal`);
    const conn = driver.open(path, { busyTimeoutMs: 100 });
    // Compiling reads the schema, which opens the -wal.
    const error = await expectError(() => conn.prepare('SELECT x FROM t').all(), DbError);
    expect(error.code).toBe('cantopen');
    expect(error.message).toContain(`${path}-wal`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EISDIR');
    // The failure was taken with that error: a later, unrelated error carries no stale cause.
    const syntax = await expectError(() => conn.prepare('SELEC 1'), DbError);
    expect(syntax.code).toBe('sql');
    expect(syntax.cause).toBeUndefined();
    conn.close();
  });
});
