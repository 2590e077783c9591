/**
 * Connection.openStatements against SQLite's own list of prepared statements
 * (the sqlite_stmt table, compiled into the wasm build only): the diagnostic
 * the Database tests rely on counts what the engine holds.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { tempDir, testDriver } from '../support/test-driver.js';

describe('openStatements matches the engine', () => {
  it('moves with prepare and finalize exactly as sqlite_stmt does; pragma() adds nothing per call', async () => {
    const driver = await testDriver();
    const conn = driver.open(join(tempDir(), 'count.db'), { busyTimeoutMs: 1_000 });
    const engine = conn.prepare('SELECT count(*) AS n FROM sqlite_stmt');
    const count = () => ({ engine: engine.get()?.n as number, driver: conn.openStatements });
    const start = count();
    const made = Array.from({ length: 5 }, (_, i) => conn.prepare(`SELECT ${i} AS x`));
    expect(count()).toEqual({ engine: start.engine + 5, driver: start.driver + 5 });
    for (const stmt of made.slice(0, 3)) stmt.finalize();
    expect(count()).toEqual({ engine: start.engine + 2, driver: start.driver + 2 });
    for (const stmt of made.slice(3)) stmt.finalize();

    const db = new Database(conn);
    db.pragma('freelist_count');
    const cached = count();
    for (let i = 0; i < 1000; i++) db.pragma('freelist_count');
    expect(count()).toEqual(cached);
    db.close();
  });
});
