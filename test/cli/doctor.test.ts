import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentStampMs, LEASE_EXPIRY_MS } from '../../src/db/lock-records/owner-lease.js';
import { REC, RECORD_SIZE, writeRecordHead, type LockOwner } from '../../src/db/lock-records/portable-lock-files.js';
import { clockIsBoots, currentProcess, formatProcessIdentity } from '../../src/db/processes/process-identity.js';
import { fixturePath } from '../support/child-process.js';
import { doctorCheck, doctorReport } from '../support/doctor-report.js';
import { startMcp } from '../support/mcp-process.js';
import { withoutNodeSqlite } from '../support/node-versions.js';
import { ownNamespacePrefix, pidNamespacesUnavailable } from '../support/pid-namespace.js';
import { openTestDatabase, testDriver, testDriverName, tempDir } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli, waitForPidExit } from './cli-process.js';

/** A pid above Linux's pid_max (2^22): no process can have it. */
const DEAD_PID = 4_194_305;

/** A lock-table record as the wasm driver writes it, for `owner`, lease stamped `ageMs` ago. */
function lockRecord(owner: LockOwner, ageMs = 0): Buffer {
  const record = Buffer.alloc(RECORD_SIZE);
  writeRecordHead(record, 0, owner, { stampMs: (currentStampMs() - ageMs) >>> 0, bootClock: clockIsBoots() });
  record[REC.dbShared] = 1;
  return record;
}

/** An owner in a pid namespace other than this process's, on this machine (same boot). */
function foreignOwner(pid: number): LockOwner {
  const me = currentProcess().realm;
  if (me === undefined) throw new Error('this test needs /proc (Linux)');
  return { pid, startTime: 777, connection: 1, realm: { boot: me.boot, pidNamespace: me.pidNamespace + 1 } };
}

async function createdBus(dir: string): Promise<void> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  for (let i = 0; i < 50; i++) await server.call('send', { as: 'Alice', channel: 'work', content: `message ${i} `.repeat(40) });
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
}

describe('agentbus doctor', () => {
  it('finds no problem in a healthy bus, with a server running, as JSON and text', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    const run = await runCli(dir, ['doctor', '--json']);
    expect(run.code).toBe(0);
    const report = doctorReport(jsonOf(run));
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(['config', 'data_directory', 'file_system', 'disk', 'database', 'lock_protocol', 'wal', 'schema', 'integrity', 'stale_locks', 'shared_files']);
    for (const name of ['config', 'data_directory', 'file_system', 'lock_protocol', 'wal', 'schema', 'integrity', 'stale_locks', 'shared_files']) expect(doctorCheck(report, name).status).toBe('ok');
    expect(doctorCheck(report, 'file_system').message).toMatch(/local file system/);
    const text = await runCli(dir, ['doctor']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/no problems found/);
  });

  it('on a fresh install says which driver a new database would get; a driver setting that cannot run is a problem', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const run = await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DRIVER: '' } });
    const report = doctorReport(jsonOf(run));
    expect(doctorCheck(report, 'new_database')).toMatchObject({ status: 'ok', message: expect.stringMatching(/^a new database would get (native \(lock protocol posix\)|wasm \(lock protocol portable\)): auto: /) });
    expect(report.checks.map((c) => c.name)).toEqual(['config', 'data_directory', 'file_system', 'disk', 'database', 'new_database', 'stale_locks', 'shared_files']);
    // A setting naming a driver this Node lacks: node:sqlite disabled stands in for Node 20.
    const forced = await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DRIVER: 'native', ...withoutNodeSqlite() } });
    expect(forced.code).toBe(1);
    expect(doctorCheck(jsonOf(forced), 'new_database')).toMatchObject({
      status: 'problem',
      message: expect.stringMatching(/AGENTBUS_DRIVER=native asks for the native driver, but the native driver needs Node >= 22\.13\.0.*unset AGENTBUS_DRIVER/),
    });
  });

  it('reports a bad config value as a problem naming the key, exit 1', async () => {
    const dir = tempDir();
    prepareCliDir(dir, { config: { receive_max_wait_seconds: 999 } });
    const run = await runCli(dir, ['doctor', '--json']);
    expect(run.code).toBe(1);
    const report = doctorReport(jsonOf(run));
    expect(report.ok).toBe(false);
    expect(doctorCheck(report, 'config').status).toBe('problem');
    expect(doctorCheck(report, 'config').message).toMatch(/receive_max_wait_seconds/);
  });

  it('warns about a data directory other users can reach', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o755 });
    const run = await runCli(dir, ['doctor', '--json'], { env: { AGENTBUS_DATA_DIR: data } });
    expect(run.code).toBe(0);
    expect(doctorCheck(jsonOf(run), 'data_directory').status).toBe('warn');
  });

  it('reports stale locks of a dead process and clears only those with --fix', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const db = join(dir, 'agentbus.db');
    mkdirSync(`${db}.setup-lock`);
    // An owner of this machine and pid namespace that no longer runs: certainly dead.
    writeFileSync(`${db}.setup-lock/owner`, formatProcessIdentity({ pid: DEAD_PID, startTime: 12345, realm: currentProcess().realm }));
    writeFileSync(`${db}-locks`, lockRecord({ pid: DEAD_PID, startTime: 12345, connection: 1, realm: currentProcess().realm }));

    const found = await runCli(dir, ['doctor', '--json']);
    expect(found.code).toBe(1);
    const stale = doctorCheck(jsonOf(found), 'stale_locks');
    expect(stale.status).toBe('problem');
    expect(stale.message).toContain(String(DEAD_PID));
    expect(existsSync(`${db}.setup-lock`)).toBe(true); // reported, not touched

    const fixed = await runCli(dir, ['doctor', '--json', '--fix']);
    expect(fixed.code).toBe(0);
    expect(doctorCheck(jsonOf(fixed), 'stale_locks').status).toBe('fixed');
    expect(existsSync(`${db}.setup-lock`)).toBe(false);
    expect(existsSync(`${db}-locks`)).toBe(false);
    expect((await runCli(dir, ['doctor'])).code).toBe(0);
  });

  it('never clears a lock whose owner is alive', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const db = join(dir, 'agentbus.db');
    mkdirSync(`${db}.setup-lock`);
    // The test runner itself: alive for the whole test (start time 0 means "pid only").
    writeFileSync(`${db}.setup-lock/owner`, formatProcessIdentity({ pid: process.pid, startTime: 0, realm: currentProcess().realm }));
    const run = await runCli(dir, ['doctor', '--json', '--fix']);
    expect(doctorCheck(jsonOf(run), 'stale_locks').status).toBe('ok');
    expect(existsSync(`${db}.setup-lock/owner`)).toBe(true);
  });

  it('checks the bus tables by default and every page with --full: a damaged messages page only --full finds', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const { db } = await openTestDatabase(dir);
    const root = db.get<{ rootpage: number }>("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'")?.rootpage as number;
    db.close();
    const copy = tempDir();
    prepareCliDir(copy);
    const file = join(copy, 'agentbus.db');
    copyFileSync(join(dir, 'agentbus.db'), file);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, (root - 1) * 4096);
    closeSync(fd);
    const quick = await runCli(copy, ['doctor', '--json']);
    expect(doctorCheck(jsonOf(quick), 'integrity').status).toBe('ok');
    const full = await runCli(copy, ['doctor', '--json', '--full']);
    expect(full.code).toBe(1);
    expect(doctorCheck(jsonOf(full), 'integrity').status).toBe('problem');
  });

  it('reports a corrupted copy as an integrity problem, exit 1', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const copy = tempDir();
    prepareCliDir(copy);
    const file = join(copy, 'agentbus.db');
    copyFileSync(join(dir, 'agentbus.db'), file);
    const pages = statSync(file).size / 4096;
    expect(pages).toBeGreaterThan(4);
    const fd = openSync(file, 'r+');
    // Scribble over every page but the header page: the b-trees no longer parse.
    for (let page = 1; page < pages; page++) writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, page * 4096 + 100);
    closeSync(fd);
    const run = await runCli(copy, ['doctor', '--json']);
    expect(run.code).toBe(1);
    expect(doctorCheck(jsonOf(run), 'integrity').status).toBe('problem');
  });

  it('reports a file that is not an agentbus database', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    writeFileSync(join(dir, 'agentbus.db'), Buffer.alloc(8192, 7));
    const run = await runCli(dir, ['doctor', '--json']);
    expect(run.code).toBe(1);
    expect(doctorCheck(jsonOf(run), 'database').status).toBe('problem');
  });

  it('flags a live portable-protocol connection on a posix file, and accepts it on a portable one', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const db = join(dir, 'agentbus.db');
    // The test runner: alive.
    writeFileSync(`${db}-locks`, lockRecord({ pid: process.pid, startTime: currentProcess().startTime, connection: 1, realm: currentProcess().realm }));
    const run = await runCli(dir, ['doctor', '--json', '--fix']);
    const locks = doctorCheck(jsonOf(run), 'stale_locks');
    if ((await testDriver()).capabilities.lockProtocol === 'posix') {
      expect(run.code).toBe(1);
      expect(locks.status).toBe('problem');
      expect(locks.message).toContain(String(process.pid));
    } else {
      expect(run.code).toBe(0);
      expect(locks.status).toBe('ok');
    }
    expect(existsSync(`${db}-locks`)).toBe(true); // a live owner's lock is never cleared
  });

  it('judges a lock of a process in another pid namespace by its lease: live while renewed (kept by --fix), stale once expired (--fix revokes it)', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const db = join(dir, 'agentbus.db');
    // pid 1 of another namespace: in this one, pid 1 is init and alive, and must not be mistaken for it.
    const record = lockRecord(foreignOwner(1));
    writeFileSync(`${db}-locks`, record);
    const portable = (await testDriver()).capabilities.lockProtocol === 'portable';
    const live = await runCli(dir, ['doctor', '--json', '--fix']);
    const liveCheck = doctorCheck(jsonOf(live), 'stale_locks');
    // On a posix file any live portable-protocol process is a problem of its own.
    expect(liveCheck.status).toBe(portable ? 'ok' : 'problem');
    expect(liveCheck.message).toMatch(/pid 1 in another pid namespace or machine, lease last renewed [0-9.]+ s ago/);
    // Untouched (doctor's own connection, if it has one, used and freed a record of its own).
    expect(readFileSync(`${db}-locks`).subarray(0, RECORD_SIZE)).toEqual(record);

    writeFileSync(`${db}-locks`, lockRecord(foreignOwner(1), LEASE_EXPIRY_MS + 10_000));
    const found = await runCli(dir, ['doctor', '--json']);
    expect(found.code).toBe(1);
    const stale = doctorCheck(jsonOf(found), 'stale_locks');
    expect(stale.status).toBe('problem');
    expect(stale.message).toMatch(/lease last renewed [0-9.]+ s ago \(expired: crashed or stopped\)/);
    const fixed = await runCli(dir, ['doctor', '--json', '--fix']);
    expect(fixed.code).toBe(0);
    expect(doctorCheck(jsonOf(fixed), 'stale_locks').status).toBe('fixed');
    expect(existsSync(`${db}-locks`)).toBe(false);
  });

  it('never clears a lock an older agentbus wrote without a pid namespace whose process is not visible here, and says what to do', async () => {
    const dir = tempDir();
    await createdBus(dir);
    const db = join(dir, 'agentbus.db');
    const legacy = Buffer.alloc(RECORD_SIZE); // no flags: no realm, no lease
    legacy.writeUInt32LE(DEAD_PID, REC.pid);
    legacy.writeUInt32LE(1, REC.connection);
    legacy.writeDoubleLE(12345, REC.startTime);
    writeFileSync(`${db}-locks`, legacy);
    const run = await runCli(dir, ['doctor', '--json', '--fix']);
    expect(run.code).toBe(1);
    const locks = doctorCheck(jsonOf(run), 'stale_locks');
    expect(locks.status).toBe('problem');
    expect(locks.message).toMatch(/older agentbus/);
    // The file is not damaged: nothing advises restoring or resetting it (which would wipe the bus).
    expect(doctorCheck(jsonOf(run), 'integrity').status).not.toBe('problem');
    expect(doctorCheck(jsonOf(run), 'schema').status).not.toBe('problem');
    if ((await testDriver()).capabilities.lockProtocol === 'portable') {
      expect(locks.message).toMatch(/cannot be judged/);
      expect(locks.message).toContain(`${db}-locks`);
    }
    expect(readFileSync(`${db}-locks`)).toEqual(legacy);
  });

  const unavailable = pidNamespacesUnavailable();
  it.skipIf(unavailable !== undefined)(
    `on the host, while an agentbus process in another pid namespace holds a write transaction: nothing stale, --fix removes nothing, the transaction commits${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
    async () => {
      const dir = tempDir();
      await createdBus(dir);
      const db = join(dir, 'agentbus.db');
      const command = [...ownNamespacePrefix(), process.execPath, fixturePath('db-child.js'), 'hold', dir, '15000'];
      const holder = spawn(command[0] as string, command.slice(1), {
        env: { ...process.env, AGENTBUS_DRIVER: testDriverName() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      holder.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      holder.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      const exited = new Promise<number | null>((resolve) => holder.on('exit', (code) => resolve(code)));
      const deadline = Date.now() + 30_000;
      while (!out.includes('locked')) {
        if (Date.now() > deadline || holder.exitCode !== null) throw new Error(`holder did not take the lock: ${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const sideFiles = ['-wal', '-shm', '-locks'].filter((s) => existsSync(`${db}${s}`));
      const run = await runCli(dir, ['doctor', '--json', '--fix']);
      const locks = doctorCheck(jsonOf(run), 'stale_locks');
      expect(locks.status).toBe('ok');
      if ((await testDriver()).capabilities.lockProtocol === 'portable') {
        expect(locks.message).toMatch(/in another pid namespace or machine, lease last renewed/);
      }
      for (const s of sideFiles) expect(existsSync(`${db}${s}`), `${db}${s} left in place`).toBe(true);
      expect(await exited, out).toBe(0);
      const after = await runCli(dir, ['doctor', '--json']);
      expect(doctorCheck(jsonOf(after), 'integrity').status).toBe('ok');
      const { db: bus } = await openTestDatabase(dir);
      expect(bus.get("SELECT count(*) AS n FROM t WHERE tag = 'holder'")).toEqual({ n: 1 });
      bus.close();
    },
    90_000,
  );
});
