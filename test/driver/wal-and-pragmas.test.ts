import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openTestDatabase, tempDir, testDriver } from '../support/test-driver.js';

describe('WAL and page pragmas on a real file', () => {
  it('runs in WAL mode, with a -wal file beside the database, exactly when the driver claims WAL', async () => {
    const driver = await testDriver();
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE w (x INTEGER)');
    db.transaction(() => db.run('INSERT INTO w VALUES (1)'));
    if (driver.capabilities.wal) {
      expect(db.pragma('journal_mode')).toBe('wal');
      expect(existsSync(`${db.path}-wal`)).toBe(true);
      expect(statSync(`${db.path}-wal`).size).toBeGreaterThan(0);
    } else {
      expect(db.pragma('journal_mode')).toBe('delete');
      expect(existsSync(`${db.path}-wal`)).toBe(false);
    }
    db.close();
  });

  it('reports its capabilities and a SQLite version', async () => {
    const driver = await testDriver();
    expect(typeof driver.capabilities.wal).toBe('boolean');
    expect(['posix', 'portable']).toContain(driver.capabilities.lockProtocol);
    expect(driver.capabilities.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
  });

  it('reports page_size, page_count and freelist_count, and incremental_vacuum empties the freelist', async () => {
    const { db } = await openTestDatabase(tempDir());
    expect(db.pragma('auto_vacuum')).toBe(2);
    expect(db.pragma('page_size')).toBe(4096);
    db.exec('CREATE TABLE big (x TEXT)');
    db.transaction(() => {
      for (let i = 0; i < 500; i++) db.run('INSERT INTO big VALUES (?)', ['x'.repeat(2000)]);
    });
    const pages = db.pragma('page_count') as number;
    expect(pages).toBeGreaterThan(250);
    db.transaction(() => db.run('DELETE FROM big'));
    const free = db.pragma('freelist_count') as number;
    expect(free).toBeGreaterThan(200);
    db.run('PRAGMA incremental_vacuum');
    expect(db.pragma('freelist_count')).toBe(0);
    expect(db.pragma('page_count') as number).toBeLessThan(pages - 200);
    expect(db.pragma('integrity_check')).toBe('ok');
    db.close();
  });

  it('pragma() leaves no statement open per call (the maintenance tick asks every time)', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.pragma('freelist_count');
    db.pragma('page_count');
    const before = db.openStatements;
    for (let i = 0; i < 1000; i++) {
      expect(db.pragma('freelist_count')).toBe(0);
      expect(db.pragma('page_count')).toBeGreaterThan(0);
    }
    expect(db.openStatements).toBe(before);
    db.close();
  });
});
