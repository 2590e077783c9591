import { describe, expect, it } from 'vitest';
import { maintenanceFor, T0, testDb } from '../support/maintenance.js';
import { TestClock } from '../support/test-clock.js';
import { testConfig } from '../support/test-config.js';

describe('maintenance tick and the statement cache', () => {
  it('repeated ticks leave as many statements open as the first one did', async () => {
    const { db, dir } = await testDb();
    const maintenance = maintenanceFor(db, testConfig(dir), new TestClock({ start: T0 }));
    db.exec('CREATE TABLE filler (x TEXT)');
    const open: number[] = [];
    for (let tick = 0; tick < 5; tick++) {
      // A different number of free pages each time, so the vacuum step's work differs from tick to tick.
      db.transaction(() => {
        for (let i = 0; i < 20 + tick * 17; i++) db.run('INSERT INTO filler VALUES (?)', ['x'.repeat(3000)]);
      });
      db.transaction(() => db.run('DELETE FROM filler'));
      const report = await maintenance.runTick();
      expect(report.leased).toBe(true);
      expect(report.steps.find((s) => s.name === 'vacuum')?.rows).toBeGreaterThanOrEqual(20 + tick * 17);
      open.push(db.openStatements);
    }
    expect(new Set(open).size, `open statements after each tick: ${open.join(', ')}`).toBe(1);
    db.close();
  });
});
