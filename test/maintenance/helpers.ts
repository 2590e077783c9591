/**
 * Shared set-up for maintenance tests: a real database per test, a config
 * built from the defaults with overrides, a test clock, and row builders
 * that write the schema directly (ages are set by timestamp, never by sleeping).
 */
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { createMemoryLogger } from '../../src/log.js';
import type { Clock } from '../../src/clock.js';
import { createMaintenance, type Maintenance, type MaintenanceOptions } from '../../src/maintenance/tick.js';
import { TestClock } from '../support/test-clock.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

export { TestClock } from '../support/test-clock.js';

export const HOUR = 3_600_000;
export const T0 = Date.UTC(2026, 0, 1);

export function testClock(start = T0): TestClock {
  return new TestClock({ start });
}

/** The defaults with overrides; budgets below the file schema's minimum are allowed here on purpose. */
export function testConfig(dir: string, overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ env: {}, homeDir: dir, cwd: dir }), data_directory: dir, ...overrides };
}

export async function testDb(): Promise<{ db: Database; dir: string }> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  return { db, dir };
}

export function maintenanceFor(db: Database, config: Config, clock: Clock, extra: Partial<MaintenanceOptions> = {}): Maintenance {
  return createMaintenance({ db, config, clock, log: createMemoryLogger(), owner: 'test-owner', processIdentity: undefined, lockTargetMs: Infinity, ...extra });
}

export function addChannel(db: Database, name: string, kind: 'ordinary' | 'memory' = 'ordinary'): void {
  db.run('INSERT INTO channels (name, kind) VALUES (?, ?)', [name, kind]);
}

/** Inserts `count` ordinary messages created at `createdAt`; returns their seqs. */
export function addMessages(db: Database, channel: string, count: number, createdAt: number, content = (i: number) => `message ${i}`): number[] {
  const seqs: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const text = content(i);
      const r = db.run(
        "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES (?, 'alice', 'ctx', ?, 'note', ?, ?)",
        [channel, createdAt, text, Buffer.byteLength(text)],
      );
      seqs.push(r.lastInsertRowid);
    }
  });
  return seqs;
}

/** Inserts one memory revision; tombstoned at `tombstoneAt` when given. Returns its seq. */
export function addRevision(
  db: Database,
  channel: string,
  memoryId: number,
  revision: number,
  createdAt: number,
  content: string,
  tombstoneAt?: number,
): number {
  return db.run(
    `INSERT INTO messages (channel, sender, context, created_at, type, content, memory_id, revision, tombstone, tombstone_at, bytes)
     VALUES (?, 'alice', 'ctx', ?, 'memory', ?, ?, ?, ?, ?, ?)`,
    [channel, createdAt, content, memoryId, revision, tombstoneAt === undefined ? 0 : 1, tombstoneAt ?? null, Buffer.byteLength(content)],
  ).lastInsertRowid;
}

export function count(db: Database, sql: string, params: readonly (string | number)[] = []): number {
  return db.get<{ n: number }>(sql, params)?.n ?? -1;
}

/** Seqs the FTS index (not the content table) returns for a term. */
export function ftsHits(db: Database, term: string): number[] {
  return db.all<{ rowid: number }>('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid', [term]).map((r) => r.rowid);
}

/** Throws when the FTS index disagrees with the messages table. */
export function ftsIntegrity(db: Database): void {
  db.run("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
}

export function evictedBefore(db: Database, channel: string): number {
  return db.get<{ e: number }>('SELECT evicted_before_seq AS e FROM channels WHERE name = ?', [channel])?.e ?? -1;
}
