import { chownSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../../src/db/open/open-database.js';
import { inspectWal } from '../../src/db/storage/wal-file.js';
import { jsonOf, prepareCliDir, runCli, waitForPidExit } from '../cli/cli-process.js';
import { doctorCheck } from '../support/doctor-report.js';
import { startMcp } from '../support/mcp-process.js';
import { runningAsRoot } from '../support/privileges.js';
import { mountSmallDisk } from '../support/small-disk.js';
import { tempDir } from '../support/test-driver.js';


/** An unused uid: the owner of "another user's" files. */
const OTHER_UID = 54_321;
const WAL_HEADER = 32;

/** A bus whose server was killed (SIGKILL) after `sends` sends: its -wal is left as a crash leaves it. */
async function crashedBus(dir: string, sends: number): Promise<string> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  for (let i = 0; i < sends; i++) await server.call('send', { as: 'Alice', channel: 'work', content: `message ${i} `.repeat(20) });
  const pid = server.transport.pid;
  process.kill(pid as number, 'SIGKILL');
  await waitForPidExit(pid);
  return `${databasePath(dir)}-wal`;
}

function frameSize(wal: string): number {
  return 24 + readFileSync(wal).readUInt32BE(8);
}

describe('doctor and the -wal', () => {
  it('finds nothing wrong with the -wal a crash leaves', async () => {
    const dir = tempDir();
    const wal = await crashedBus(dir, 30);
    expect(inspectWal(wal)).toMatchObject({ kind: 'ok' });
    const run = await runCli(dir, ['doctor', '--json']);
    expect(doctorCheck(jsonOf(run), 'wal')).toMatchObject({ status: 'ok', message: expect.stringMatching(/commit/) });
    expect(doctorCheck(jsonOf(run), 'integrity').status).toBe('ok');
  });

  it('finds nothing wrong with a torn last frame (a crash in the middle of a write)', async () => {
    const dir = tempDir();
    const wal = await crashedBus(dir, 30);
    const size = statSync(wal).size;
    const fd = openSync(wal, 'r+');
    writeSync(fd, Buffer.alloc(100, 0xee), 0, 100, size - 100);
    closeSync(fd);
    expect(inspectWal(wal)).toMatchObject({ kind: 'ok' });
  });

  it('warns about frames overwritten in the middle: the commits behind them are silently dropped', async () => {
    const dir = tempDir();
    const wal = await crashedBus(dir, 30);
    const frame = frameSize(wal);
    const frames = Math.floor((statSync(wal).size - WAL_HEADER) / frame);
    expect(frames).toBeGreaterThan(20);
    const fd = openSync(wal, 'r+');
    writeSync(fd, Buffer.alloc(frame * 3, 0x5a), 0, frame * 3, WAL_HEADER + 9 * frame);
    closeSync(fd);
    expect(inspectWal(wal)).toMatchObject({ kind: 'broken', brokenFrame: 10 });
    const report = jsonOf(await runCli(dir, ['doctor', '--json']));
    expect(doctorCheck(report, 'wal')).toMatchObject({ status: 'warn', message: expect.stringMatching(/damaged: frame 10 fails its checksum/) });
    // Opening it would let SQLite drop the evidence; doctor leaves the file alone and says so.
    expect(doctorCheck(report, 'integrity').status).toBe('warn');
    expect(inspectWal(wal)).toMatchObject({ kind: 'broken', brokenFrame: 10 });
  });

  it('warns about a -wal whose header is garbage', async () => {
    const dir = tempDir();
    const wal = await crashedBus(dir, 10);
    const fd = openSync(wal, 'r+');
    writeSync(fd, Buffer.alloc(WAL_HEADER, 0x33), 0, WAL_HEADER, 0);
    closeSync(fd);
    expect(inspectWal(wal)).toMatchObject({ kind: 'bad_header' });
    const report = jsonOf(await runCli(dir, ['doctor', '--json']));
    expect(doctorCheck(report, 'wal')).toMatchObject({ status: 'warn', message: expect.stringMatching(/not a valid WAL header/) });
  });
});

describe('doctor and the disk', () => {
  it('reports a full disk as a problem and a nearly full one as a warning', async (ctx) => {
    const disk = mountSmallDisk(24 * 1024 * 1024);
    if (typeof disk === 'string') return ctx.skip(disk);
    const data = join(disk.dir, 'data');
    const dir = tempDir();
    prepareCliDir(dir, { config: { data_directory: data, sqlite_budget_mib: 64 } });
    const server = await startMcp(dir, { config: { data_directory: data, sqlite_budget_mib: 64 }, env: { AGENTBUS_DATA_DIR: data } });
    await server.call('register', { name: 'Alice' });
    const nearly = jsonOf(await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DATA_DIR: data } }));
    // 24 MiB of disk, and the budget lets the database grow to 64 MiB.
    expect(doctorCheck(nearly, 'disk')).toMatchObject({ status: 'warn', message: expect.stringMatching(/nearly full/) });

    disk.fill();
    const full = await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DATA_DIR: data } });
    expect(full.code).toBe(1);
    expect(doctorCheck(jsonOf(full), 'disk')).toMatchObject({ status: 'problem', message: expect.stringMatching(/is full/) });
  });
});

describe('doctor and another user\'s files', () => {
  it('names the owner of a data directory it cannot use and never advises a chmod that cannot work', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip('making files of another user needs root (chown); CI runs as root');
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, OTHER_UID, OTHER_UID);
    const run = await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DATA_DIR: data }, withoutDacOverride: true });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const dataDir = doctorCheck(jsonOf(run), 'data_directory');
    expect(dataDir.status).toBe('problem');
    expect(dataDir.message).toContain(`uid ${OTHER_UID}`);
    expect(dataDir.message).toMatch(/run agentbus as/);
    expect(dataDir.message).not.toMatch(/chmod/);
  });

  it('reports a -wal left by another user (agentbus once run as root) as a shared-file problem', async (ctx) => {
    if (!runningAsRoot()) return ctx.skip('making files of another user needs root (chown); CI runs as root');
    const dir = tempDir();
    const wal = await crashedBus(dir, 5);
    chownSync(wal, OTHER_UID, OTHER_UID);
    const run = await runCli(dir, ['doctor', '--json'], { withoutDacOverride: true });
    expect(run.stderr).toBe('');
    const shared = doctorCheck(jsonOf(run), 'shared_files');
    expect(shared.status).toBe('problem');
    expect(shared.message).toContain(wal);
    expect(shared.message).toContain(`uid ${OTHER_UID}`);
  });
});
