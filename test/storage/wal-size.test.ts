import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/db/contract/wal-size-limit.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

describe('the -wal file size', () => {
  it('goes back under the limit when SQLite restarts the WAL, instead of keeping its largest size for good', async () => {
    const { db } = await openTestDatabase(tempDir());
    db.exec('CREATE TABLE filler (b BLOB)');
    const blob = new Uint8Array(64 * 1024).fill(7);
    // One transaction bigger than the limit: the WAL must grow past it to hold the transaction (a
    // driver may cut it back right after the commit on its own; then the rest holds trivially).
    db.transaction(() => {
      for (let i = 0; i < (WAL_SIZE_LIMIT_BYTES * 1.5) / blob.length; i++) db.run('INSERT INTO filler VALUES (?)', [blob]);
    });
    const wal = `${db.path}-wal`;
    // Copy every frame into the database; no reader holds an old snapshot, so the next write restarts the WAL.
    db.all('PRAGMA wal_checkpoint(PASSIVE)');
    db.transaction(() => db.run('INSERT INTO filler VALUES (?)', [new Uint8Array(10)]));
    expect(statSync(wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    db.close();
  });
});
