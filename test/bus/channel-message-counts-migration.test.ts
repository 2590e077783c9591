/**
 * The per-channel live message counters (migration 0011) are filled from the
 * rows a SQLite file already held when the migration runs, and counted row
 * by row before it (status reads files it never migrates). A PostgreSQL
 * schema starts at 0011 (sql/postgres/), so this runs on the file drivers
 * only (test/postgres/not-on-postgres.ts).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { channelCounts } from '../../src/bus/status-report.js';
import type { Database } from '../../src/db/contract/database.js';
import { defaultMigrationsDir } from '../../src/db/open/migrations.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

const kept = (db: Database) => Object.fromEntries(channelCounts(db).map((c) => [c.name, c.messages]));

describe('channel message counters', () => {
  it('are filled from the rows already there when the migration runs, and counted row by row before it', async () => {
    const dir = tempDir();
    const before = tempDir('agentbus-migrations-');
    for (const name of readdirSync(defaultMigrationsDir())) {
      if (name.endsWith('.sql') && Number(name.slice(0, 4)) < 11) copyFileSync(join(defaultMigrationsDir(), name), join(before, name));
    }
    mkdirSync(dir, { recursive: true });
    const old = (await openTestDatabase(dir, { migrationsDir: before })).db;
    for (let i = 0; i < 3; i++) {
      old.run("INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('general', 'x', 'c', 0, 'message', 'hi', 2)");
    }
    expect(old.get("SELECT 1 AS one FROM sqlite_schema WHERE name = 'channel_message_counts'")).toBeUndefined();
    expect(kept(old)).toEqual({ general: 3, memory: 0 });
    old.close();
    const migrated = (await openTestDatabase(dir)).db;
    try {
      expect(migrated.get("SELECT 1 AS one FROM sqlite_schema WHERE name = 'channel_message_counts'")).toBeDefined();
      expect(kept(migrated)).toEqual({ general: 3, memory: 0 });
    } finally {
      migrated.close();
    }
  });});
