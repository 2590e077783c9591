import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DriverName } from '../../src/db/contract/driver.js';
import { readFileState } from '../../src/db/storage/file-header.js';
import { openDatabase } from '../../src/db/open/open-database.js';
import { loadDriver } from '../../src/db/open/select-driver.js';
import { startMcp } from '../support/mcp-process.js';
import { otherProtocol, tempDir, testDriver, testFileDriverName } from '../support/test-driver.js';
import { main } from '../../src/cli/main.js';
import { jsonOf, memoryIo, runCli, waitForPidExit } from './cli-process.js';

const OTHER_DRIVER: Record<DriverName, DriverName> = { native: 'wasm', wasm: 'native' };

async function busWithMessage(dir: string) {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('send', { as: 'Alice', channel: 'work', content: 'survives the conversion' });
  return server;
}

/** The same bus after its server has exited, so no process has the file open. */
async function closedBusWithMessage(dir: string): Promise<void> {
  const server = await busWithMessage(dir);
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
}

describe('agentbus convert', () => {
  it('refuses with exit 3 while a server has the database open, leaving the header alone', async () => {
    const dir = tempDir();
    const server = await busWithMessage(dir);
    const mine = (await testDriver()).capabilities.lockProtocol;
    const run = await runCli(dir, ['convert', '--to', otherProtocol(mine)]);
    const other = await loadDriver(OTHER_DRIVER[testFileDriverName()]);
    if (other.ok) {
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(new RegExp(`pid ${server.transport.pid}`));
    } else {
      // Checked first: the target driver cannot run on this Node (native on Node 20).
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(OTHER_DRIVER[testFileDriverName()]);
    }
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: mine });
    expect((await server.call('send', { as: 'Alice', channel: 'work', content: 'still fine' })).seq).toEqual(expect.any(Number));
  });

  it('says so and changes nothing when the file already uses the target protocol', async () => {
    const dir = tempDir();
    await closedBusWithMessage(dir);
    const mine = (await testDriver()).capabilities.lockProtocol;
    const run = await runCli(dir, ['convert', '--to', mine]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/already uses/);
  });

  it('converts when no process has it open; the other driver then opens it with the data intact', async () => {
    const dir = tempDir();
    await closedBusWithMessage(dir);
    const mine = (await testDriver()).capabilities.lockProtocol;
    const target = otherProtocol(mine);
    const otherName = OTHER_DRIVER[testFileDriverName()];
    const other = await loadDriver(otherName);
    const run = await runCli(dir, ['convert', '--to', target]);
    const db = join(dir, 'agentbus.db');
    if (!other.ok) {
      // The target driver cannot run on this Node: the command must say so and change nothing.
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(otherName);
      expect(readFileState(db)).toEqual({ kind: 'agentbus', protocol: mine });
      return;
    }
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(readFileState(db)).toEqual({ kind: 'agentbus', protocol: target });

    const opened = await openDatabase({ dataDir: dir, driver: otherName });
    try {
      expect(opened.db.capabilities.lockProtocol).toBe(target);
      expect(opened.db.get<{ content: string }>("SELECT content FROM messages WHERE channel = 'work'")?.content).toBe('survives the conversion');
      expect(opened.db.pragma('integrity_check')).toBe('ok');
    } finally {
      opened.db.close();
    }
    // The CLI with the other driver sees the same bus; this project's driver is now refused.
    const status = await runCli(dir, ['status', '--json'], { env: { AGENTBUS_DRIVER: otherName } });
    expect(status.code).toBe(0);
    expect(jsonOf(status).database.lock_protocol).toBe(target);
    const refused = await runCli(dir, ['status']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/convert/);

    // And back again.
    const back = await runCli(dir, ['convert', '--to', mine], { env: { AGENTBUS_DRIVER: otherName } });
    expect(back.code).toBe(0);
    expect(readFileState(db)).toEqual({ kind: 'agentbus', protocol: mine });
    expect(jsonOf(await runCli(dir, ['status', '--json'])).channels).toContainEqual(expect.objectContaining({ name: 'work', messages: 1 }));
  });

  it('shows its steps on stderr when stdout is a terminal', async () => {
    const dir = tempDir();
    await closedBusWithMessage(dir);
    const mine = (await testDriver()).capabilities.lockProtocol;
    const other = await loadDriver(OTHER_DRIVER[testFileDriverName()]);
    const io = memoryIo(dir, { isTty: true, env: { AGENTBUS_PROGRESS_AFTER_MS: '0' } });
    const code = await main(['convert', '--to', otherProtocol(mine)], io);
    if (!other.ok) {
      expect(code).toBe(1);
      return;
    }
    expect(code).toBe(0);
    for (const step of ['checking that no process has the database open', 'checkpointing the WAL', 'rewriting the header', 'verifying with the']) {
      expect(io.err()).toContain(step);
    }
    expect(io.out()).toMatch(/^converted .* \(integrity ok\)/);
  });
});
