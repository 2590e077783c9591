import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SendOutput } from '../../src/bus/send.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { prepareCliDir, runCli, waitForPidExit, type CliRun } from '../cli/cli-process.js';
import { startMcp } from '../support/mcp-process.js';
import { runningAsRoot } from '../support/privileges.js';
import { mountSmallDisk } from '../support/small-disk.js';
import { tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

const OTHER_UID = 54_321;
const NEEDS_ROOT = 'making files of another user needs root (chown); CI runs as root';

/** `agentbus mcp` failed to start with exactly one line on stderr, and no stack trace. */
function oneLineFailure(run: CliRun): string {
  expect(run.code).toBe(1);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(lines[0]).toMatch(/^agentbus: /);
  return lines[0] as string;
}

/** A bus in `data` with one message; every server stopped afterwards. */
async function createdBus(configDir: string, data: string): Promise<void> {
  const server = await startMcp(configDir, { config: { data_directory: data }, env: { AGENTBUS_DATA_DIR: data } });
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('send', { as: 'Alice', channel: 'work', content: 'hello' });
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
}

describe('a full disk', () => {
  it('stops `agentbus mcp` with one line that says to free space, for a new and for an existing database', async (ctx) => {
    const disk = mountSmallDisk(16 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const dir = tempDir();
    prepareCliDir(dir);
    const existing = join(disk.dir, 'existing');
    await createdBus(dir, existing);
    disk.fill();
    for (const data of [join(disk.dir, 'new'), existing]) {
      const line = oneLineFailure(await runCli(dir, ['mcp'], { env: { AGENTBUS_DATA_DIR: data } }));
      expect(line).toMatch(/is full/);
      expect(line).toMatch(/free space/);
    }
  });

  it('answers disk_full, not retryable, while the disk is full, and works again once space is freed', async (ctx) => {
    const disk = mountSmallDisk(16 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const dir = tempDir();
    const data = join(disk.dir, 'data');
    const server = await startMcp(dir, { config: { data_directory: data }, env: { AGENTBUS_DATA_DIR: data } });
    await server.call('register', { name: 'Alice' });
    await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    disk.fill();
    let refused: ToolError['error'] | undefined;
    // The WAL may still have room for a few commits; 60 KiB messages soon need more than it has.
    for (let i = 0; i < 400 && refused === undefined; i++) {
      const answer = await server.call('send', { as: 'Alice', channel: 'work', content: `${i} `.repeat(20_000) });
      if (answer.error !== undefined) refused = toolAnswer(ToolError, answer, 'send').error;
    }
    expect(refused).toMatchObject({ code: 'disk_full', retryable: false });
    expect(refused?.message).toMatch(/free disk space/);
    disk.free();
    const after = await server.call('send', { as: 'Alice', channel: 'work', content: 'space again' });
    expect(after.error).toBeUndefined();
    expect(toolAnswer(SendOutput, after, 'send').seq).toEqual(expect.any(Number));
  });
});

describe('a read-only file system', () => {
  it('stops `agentbus mcp` with one line naming it', async (ctx) => {
    const disk = mountSmallDisk(16 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(disk.dir, 'data');
    await createdBus(dir, data);
    disk.readOnly();
    const line = oneLineFailure(await runCli(dir, ['mcp'], { env: { AGENTBUS_DATA_DIR: data } }));
    expect(line).toMatch(/read-only/);
  });
});

describe('another user\'s files', () => {
  it('a database file of another user: one line naming the owner and what can work', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip(NEEDS_ROOT);
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(dir, 'data');
    await createdBus(dir, data);
    chownSync(databasePath(data), OTHER_UID, OTHER_UID);
    const line = oneLineFailure(await runCli(dir, ['mcp'], { env: { AGENTBUS_DATA_DIR: data }, withoutDacOverride: true }));
    expect(line).toContain(databasePath(data));
    expect(line).toContain(`uid ${OTHER_UID}`);
    expect(line).toMatch(/run agentbus as uid 54321.*or set AGENTBUS_DATA_DIR/);
  });

  it('a -wal of another user (agentbus once run as root): refused at start, not a read-only bus that fails later', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip(NEEDS_ROOT);
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(dir, 'data');
    await createdBus(dir, data);
    writeFileSync(`${databasePath(data)}-wal`, '');
    chownSync(`${databasePath(data)}-wal`, OTHER_UID, OTHER_UID);
    const line = oneLineFailure(await runCli(dir, ['mcp'], { env: { AGENTBUS_DATA_DIR: data }, withoutDacOverride: true }));
    expect(line).toContain(`${databasePath(data)}-wal`);
    expect(line).toContain(`uid ${OTHER_UID}`);
  });

  it('a data directory of another user: one line naming the owner, no chmod advice', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip(NEEDS_ROOT);
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, OTHER_UID, OTHER_UID);
    const line = oneLineFailure(await runCli(dir, ['mcp'], { env: { AGENTBUS_DATA_DIR: data }, withoutDacOverride: true }));
    expect(line).toContain(`uid ${OTHER_UID}`);
    expect(line).not.toMatch(/chmod/);
  });
});
