/**
 * The contract's optional stepped copy (Connection.copyTo, what `agentbus
 * backup` uses where a driver has it): one snapshot however much is written
 * by another connection between its steps, in rollback-journal mode, sound.
 * A driver without it says so through Database.copiesInSteps (backup then
 * runs VACUUM INTO, which the backup tests cover on both drivers).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { tempDir, testDriver, testDriverName } from '../support/test-driver.js';

describe('stepped copy (Connection.copyTo)', () => {
  it('copies one snapshot in several steps while another connection writes, in rollback-journal mode', async () => {
    const driver = await testDriver();
    const dir = tempDir();
    const db = new Database(driver.open(join(dir, 'source.db'), { busyTimeoutMs: 5_000 }));
    try {
      if (!db.copiesInSteps) {
        // The wasm driver has no stepped copy yet: backup copies with VACUUM INTO there.
        expect(testDriverName()).toBe('wasm');
        await expect(db.copyTo(join(dir, 'copy.db'), () => undefined)).rejects.toMatchObject({ code: 'locked' });
        return;
      }
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      // About 4,000 pages: steps of 1,024, of which node:sqlite reports all but the last.
      db.transaction(() => {
        for (let i = 0; i < 16_000; i++) db.run('INSERT INTO t (body) VALUES (?)', [`row ${i} ${'x'.repeat(1_000)}`]);
      });
      const writer = new Database(driver.open(join(dir, 'source.db'), { busyTimeoutMs: 5_000 }));
      const steps: [number, number][] = [];
      try {
        await db.copyTo(join(dir, 'copy.db'), (copied, total) => {
          steps.push([copied, total]);
          writer.run('INSERT INTO t (body) VALUES (?)', ['written between steps']);
        });
      } finally {
        writer.close();
      }
      expect(steps.length).toBeGreaterThanOrEqual(3);
      expect(steps.at(-1)?.[0]).toBe(steps.at(-1)?.[1]);
      for (let i = 1; i < steps.length; i++) expect((steps[i] as [number, number])[0]).toBeGreaterThan((steps[i - 1] as [number, number])[0]);
      expect(db.get<{ n: number }>('SELECT count(*) AS n FROM t')?.n).toBe(16_000 + steps.length);

      const copy = new Database(driver.open(join(dir, 'copy.db'), { busyTimeoutMs: 5_000 }));
      try {
        expect(copy.get<{ n: number }>('SELECT count(*) AS n FROM t')?.n).toBe(16_000);
        expect(copy.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode).toBe('delete');
        expect(copy.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
      } finally {
        copy.close();
      }
      expect(readdirSync(dir).filter((f) => f.startsWith('copy.db')).sort()).toEqual(['copy.db']);
      // Inside a transaction it refuses: the copy reads a snapshot of its own.
      let inside: Promise<void> | undefined;
      db.read(() => {
        inside = db.copyTo(join(dir, 'again.db'), () => undefined);
        inside.catch(() => undefined); // awaited below, after the transaction
      });
      await expect(inside).rejects.toMatchObject({ code: 'locked' });
      expect(readdirSync(dir)).not.toContain('again.db');
    } finally {
      db.close();
    }
  });
});
