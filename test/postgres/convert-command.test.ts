/**
 * `agentbus convert --to postgres URL` as a person runs it: the built CLI in
 * a process of its own, over a real native SQLite bus and a fresh database
 * on the project's cluster. What the copy itself keeps is
 * copy-to-postgres.test.ts; here: the exit codes, what it prints, the
 * refusals that change nothing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { register } from '../../src/bus/identity.js';
import { send } from '../../src/bus/send.js';
import { loadConfig } from '../../src/config.js';
import { Database } from '../../src/db/contract/database.js';
import { openDatabase } from '../../src/db/open/open-database.js';
import { createMemoryLogger } from '../../src/log.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/test-driver.js';
import { connectPg, freshDatabase } from './pg-test.js';

const BIN = fileURLToPath(new URL('../../bin/agentbus.js', import.meta.url));

async function convert(dir: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'convert', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, AGENTBUS_DATA_DIR: dir, AGENTBUS_CONFIG: join(dir, 'config.json'), AGENTBUS_DRIVER: 'native' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** A closed native bus with three messages; `keepOpen` leaves this process's connection open. */
async function bus(keepOpen = false): Promise<{ dir: string; db: Database | undefined }> {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.json'), '{}');
  const { db } = await openDatabase({ dataDir: dir, driver: 'native' });
  const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dir }, homeDir: dir, cwd: dir });
  const ctx = { db, config, clock: new TestClock(), log: createMemoryLogger(), owner: 'o', processIdentity: undefined, defaultContext: 'repo' };
  register(ctx, { name: 'Ann' });
  for (const content of ['one', 'two', 'three']) await send(ctx, { as: 'Ann', channel: 'general', content });
  if (keepOpen) return { dir, db };
  db.close();
  return { dir, db: undefined };
}

const count = async (url: string): Promise<unknown> => new Database(await connectPg(url)).get('SELECT count(*)::int AS n FROM messages');

describe('agentbus convert --to postgres', () => {
  it('copies the bus, says how much and how to switch, and exits 0; a second run is refused (exit 3), changing nothing', async () => {
    const { dir } = await bus();
    const url = await freshDatabase();
    const first = await convert(dir, ['--to', 'postgres', url]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/copied .* rows, messages up to seq 3/);
    expect(first.stdout).toMatch(/database_url/);
    expect(await count(url)).toEqual({ n: 3 });
    const again = await convert(dir, ['--to', 'postgres', url]);
    expect(again.code).toBe(3);
    expect(await count(url)).toEqual({ n: 3 });
  });

  it('refuses bad input before touching anything: no URL, a malformed one, a URL for a protocol conversion (exit 2)', async () => {
    const { dir } = await bus();
    for (const args of [['--to', 'postgres'], ['--to', 'postgres', 'mysql://host/db'], ['--to', 'postgres', 'postgres://host'], ['--to', 'portable', 'postgres://host/db']]) {
      const run = await convert(dir, args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
    }
  });

  it('refuses while a process has the file open (exit 3), before it touches the database', async () => {
    const { dir, db } = await bus(true);
    try {
      const url = await freshDatabase();
      const run = await convert(dir, ['--to', 'postgres', url]);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(new RegExp(`pid ${process.pid}`));
      expect(new Database(await connectPg(url)).get("SELECT to_regclass('messages') IS NULL AS untouched")).toEqual({ untouched: 1 });
    } finally {
      db?.close();
    }
  });

  it('an unreachable server is a failure (exit 1) that never shows the password', async () => {
    const { dir } = await bus();
    const run = await convert(dir, ['--to', 'postgres', 'postgres://agentbus:secret@127.0.0.1:1/agentbus']);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/secret/);
  });
});
