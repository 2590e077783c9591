import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegisterOutput } from '../../src/bus/identity.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { runCli, waitForPidExit } from '../cli/cli-process.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir, testDriver } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

/** Overwrites the root page of the messages table with garbage; the schema and the other tables stay readable. */
async function damageMessagesTable(dir: string): Promise<void> {
  const path = databasePath(dir);
  const driver = await testDriver();
  const conn = driver.open(path, { busyTimeoutMs: 1000 });
  const stmt = conn.prepare("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'messages'");
  const root = Number((stmt.get() as { rootpage: number }).rootpage);
  const pageSize = Number(Object.values(conn.prepare('PRAGMA page_size').get() as object)[0]);
  stmt.finalize();
  conn.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (root - 1) * pageSize);
  closeSync(fd);
}

describe('a damaged database over MCP', () => {
  it('answers database_corrupt, not retryable, naming the next step, and logs it once, not per call', async () => {
    const dir = tempDir();
    const first = await startMcp(dir);
    await first.call('register', { name: 'Alice' });
    await first.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    for (let i = 0; i < 20; i++) await first.call('send', { as: 'Alice', channel: 'work', content: `message ${i}` });
    const pid = first.transport.pid;
    await first.close();
    await waitForPidExit(pid);
    await damageMessagesTable(dir);

    const server = await startMcp(dir);
    const me = toolAnswer(RegisterOutput, await server.call('register', { name: 'Alice' }), 'register');
    const answers: ToolError[] = [];
    for (let i = 0; i < 40; i++) answers.push(toolAnswer(ToolError, await server.call('send', { as: me.display_name, channel: 'work', content: `retry ${i}` }), 'send'));
    for (const answer of answers) {
      expect(answer.error).toMatchObject({ code: 'database_corrupt', retryable: false });
      expect(answer.error.message).toMatch(/agentbus doctor/);
      expect(answer.error.message).toMatch(/backup/);
    }
    const history = await server.call('history', { as: me.display_name, channel: 'work' });
    expect(history.error).toMatchObject({ code: 'database_corrupt', retryable: false });
    const serverPid = server.transport.pid;
    await server.close();
    await waitForPidExit(serverPid);

    const failures = readFileSync(join(dir, 'agentbus.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('tool failed'));
    // One line per distinct failure (send, history), not one per call.
    expect(failures).toHaveLength(2);
  });

  it('a damaged schema page: `agentbus mcp` stops with one line that names doctor and the newest backup', async () => {
    const dir = tempDir();
    const first = await startMcp(dir);
    await first.call('register', { name: 'Alice' });
    expect((await runCli(dir, ['backup'])).code).toBe(0);
    const pid = first.transport.pid;
    await first.close();
    await waitForPidExit(pid);
    // Page 1 past the 100-byte file header holds the schema's b-tree: the header still reads as agentbus.
    const fd = openSync(databasePath(dir), 'r+');
    writeSync(fd, Buffer.alloc(2000, 0xa5), 0, 2000, 100);
    closeSync(fd);

    const start = await runCli(dir, ['mcp']);
    expect(start.code).toBe(1);
    const lines = start.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/is damaged \(SQLite: .*\): run `agentbus doctor`, then restore the newest backup/);
    expect(lines[0]).toContain(join(dir, 'backups'));
  });
});
