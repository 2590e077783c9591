/**
 * A server whose database cannot be opened stays up: every tool call answers
 * why (a storage code, retryable only where waiting helps), the next call is
 * answered too, and once the cause is gone the next call works in the same
 * process. Real `agentbus mcp` processes, real files, mounts and modes.
 */
import { chmodSync, chownSync, copyFileSync, mkdirSync, openSync, closeSync, writeSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegisterOutput } from '../../src/bus/identity.js';
import { readFileState } from '../../src/db/storage/file-header.js';
import { defaultMigrationsDir, loadMigrations } from '../../src/db/open/migrations.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { OPEN_RETRY_GAP_MS } from '../../src/mcp/bus-process.js';
import { waitForPidExit } from '../cli/cli-process.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { node22, nodeWasmOnly } from '../support/node-versions.js';
import { runningAsRoot } from '../support/privileges.js';
import { mountSmallDisk } from '../support/small-disk.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';
import { usedBus } from '../support/used-bus.js';

const OTHER_UID = 54_321;
const NEEDS_ROOT = 'making files of another user and mode-locked directories mean something needs root without CAP_DAC_OVERRIDE; CI runs as root';


/** Two calls in a row both answer the error `code`, with the envelope's shape and `retryable` as given. */
async function refusedTwice(server: McpProcess, code: string, retryable: boolean): Promise<void> {
  for (const tool of ['register', 'discover'] as const) {
    const answer = await server.call(tool, tool === 'register' ? { name: 'Bob' } : {});
    const { error } = toolAnswer(ToolError, answer, tool);
    expect(error).toMatchObject({ code, retryable });
    expect(error.message.length).toBeGreaterThan(40);
  }
}

/** The next call, once the retry gap has passed, succeeds in the same process. */
async function worksAgain(server: McpProcess): Promise<void> {
  const pid = server.transport.pid;
  await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_GAP_MS + 100));
  const answer = await server.call('register', { name: 'Carol' });
  expect(answer.error).toBeUndefined();
  expect(toolAnswer(RegisterOutput, answer, 'register').display_name).toBe('Carol');
  expect(server.transport.pid).toBe(pid);
}

describe('a data directory this user cannot use', () => {
  it('mode 0500: permission_denied until it is made writable', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip(NEEDS_ROOT);
    const dir = tempDir();
    const data = join(dir, 'data');
    const options = { configPath: join(dir, 'config.json'), withoutDacOverride: true };
    await usedBus(data, options);
    chmodSync(data, 0o500);
    const server = await startMcp(data, options);
    await refusedTwice(server, 'permission_denied', false);
    expect(server.stderr()).toContain(data);
    chmodSync(data, 0o700);
    await worksAgain(server);
  });

  it("another user's: permission_denied until it is this user's again", async (ctx) => {
    if (!runningAsRoot()) return ctx.skip(NEEDS_ROOT);
    const dir = tempDir();
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, OTHER_UID, OTHER_UID);
    const server = await startMcp(data, { configPath: join(dir, 'config.json'), withoutDacOverride: true });
    await refusedTwice(server, 'permission_denied', false);
    chownSync(data, 0, 0);
    await worksAgain(server);
  });

  it('a dangling symbolic link: storage_unavailable until its target exists', async () => {
    const dir = tempDir();
    const data = join(dir, 'data');
    symlinkSync(join(dir, 'elsewhere'), data);
    const server = await startMcp(data, { configPath: join(dir, 'config.json') });
    await refusedTwice(server, 'storage_unavailable', false);
    expect(server.stderr()).toContain(join(dir, 'elsewhere'));
    mkdirSync(join(dir, 'elsewhere'), { mode: 0o700 });
    await worksAgain(server);
  });

  it('on a read-only file system: permission_denied until it is remounted read-write', async (ctx) => {
    const disk = mountSmallDisk(16 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const dir = tempDir();
    const data = join(disk.dir, 'data');
    const options = { configPath: join(dir, 'config.json') };
    await usedBus(data, options);
    disk.readOnly();
    const server = await startMcp(data, options);
    await refusedTwice(server, 'permission_denied', false);
    disk.readWrite();
    await worksAgain(server);
  });

  it('on a full disk: disk_full until space is freed', async (ctx) => {
    const disk = mountSmallDisk(16 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const dir = tempDir();
    disk.fill();
    const server = await startMcp(join(disk.dir, 'data'), { configPath: join(dir, 'config.json') });
    await refusedTwice(server, 'disk_full', false);
    disk.free();
    await worksAgain(server);
  });
});

describe('a damaged database file', () => {
  it('a garbage header where a bus was: database_corrupt until the file is restored', async () => {
    const data = tempDir();
    await usedBus(data);
    const db = databasePath(data);
    const saved = join(data, 'saved.db');
    copyFileSync(db, saved);
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(100, 0x5a), 0, 100, 0);
    closeSync(fd);
    const server = await startMcp(data);
    await refusedTwice(server, 'database_corrupt', false);
    copyFileSync(saved, db);
    await worksAgain(server);
  });
});

describe('another process in the way', () => {
  it('a wasm-only Node started while a Node 22 server holds a posix database: database_in_use, then it converts once that server exits', async () => {
    const data = tempDir();
    const modern = node22();
    const holder = await startMcp(data, { node: modern.bin, env: { ...modern.env, AGENTBUS_DRIVER: 'auto' } });
    expect((await holder.call('register', { name: 'Alice' })).error).toBeUndefined();
    expect(readFileState(databasePath(data))).toEqual({ kind: 'agentbus', protocol: 'posix' });
    const old = nodeWasmOnly();
    const late = await startMcp(data, { node: old.bin, env: { ...old.env, AGENTBUS_DRIVER: 'auto' } });
    await refusedTwice(late, 'database_in_use', true);
    const pid = holder.transport.pid;
    await holder.close();
    await waitForPidExit(pid);
    await worksAgain(late);
    expect(readFileState(databasePath(data))).toEqual({ kind: 'agentbus', protocol: 'portable' });
  });

  it('a migration that waits longer than the busy timeout for the write lock is tried again, not fatal', async () => {
    const data = tempDir();
    // A bus one release behind: made with every migration but the newest, which is pending for the next server.
    const migrations = loadMigrations(defaultMigrationsDir());
    const older = tempDir();
    for (const m of migrations.slice(0, -1)) copyFileSync(join(defaultMigrationsDir(), m.name), join(older, m.name));
    const { db } = await openTestDatabase(data, { migrationsDir: older });
    db.exec('BEGIN IMMEDIATE');
    db.run("UPDATE sessions SET context = context WHERE sender = 'Alice'");
    const server = await startMcp(data);
    await refusedTwice(server, 'database_in_use', true);
    db.exec('COMMIT');
    await worksAgain(server);
    expect(db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version').at(-1)?.version).toBe(migrations.at(-1)?.version);
    db.close();
  }, 60_000);
});
