import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryOutput } from '../../src/bus/history.js';
import { RegisterOutput } from '../../src/bus/identity.js';
import { SendOutput } from '../../src/bus/send.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { inboxDir } from '../../src/harness/inbox-file.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir, testDriver } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

async function runningBus(dir: string): Promise<McpProcess> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('send', { as: 'Alice', channel: 'work', content: 'before' });
  return server;
}

/**
 * Deleting one of the files every process shares while a server runs: the
 * server must refuse every later call, loudly and for good, instead of going
 * on with a WAL index or lock table that processes started afterwards no
 * longer see. With `another`, a process started afterwards works and loses
 * nothing it acknowledged.
 */
async function deleteUnderRunningServer(suffix: string, replace: boolean, another = true): Promise<boolean> {
  const dir = tempDir();
  const a = await runningBus(dir);
  const file = `${databasePath(dir)}${suffix}`;
  if (!existsSync(file)) return false;
  await a.call('subscribe', { as: 'Alice', channel: 'work' });
  await a.call('receive', { as: 'Alice' });
  // A receive already waiting when the file goes must not deliver (a write) when the other process's sends wake it.
  const waiting = a.call('receive', { as: 'Alice', wait_seconds: 30 });
  await new Promise((r) => setTimeout(r, 300));
  if (replace) {
    copyFileSync(file, join(dir, 'copy'));
    renameSync(join(dir, 'copy'), file);
  } else {
    rmSync(file);
  }

  const acknowledged: number[] = [];
  const b = another ? await startMcp(dir) : undefined;
  const bob = b === undefined ? undefined : toolAnswer(RegisterOutput, await b.call('register', { name: 'Bob' }), 'register');
  if (b !== undefined && bob !== undefined) {
    for (let i = 0; i < 10; i++) {
      const sent = await b.call('send', { as: bob.display_name, channel: 'work', content: `after ${i}` });
      expect(sent.error).toBeUndefined();
      acknowledged.push(toolAnswer(SendOutput, sent, 'send').seq);
    }
  }

  for (const [tool, args] of [
    ['send', { as: 'Alice', channel: 'work', content: 'from the old process' }],
    ['history', { as: 'Alice', channel: 'work' }],
  ] as const) {
    const answer = toolAnswer(ToolError, await a.call(tool, args), tool);
    expect(answer.error).toMatchObject({ code: 'internal', retryable: false });
    expect(answer.error.message).toContain(file);
    expect(answer.error.message).toMatch(/Restart this agent session/);
  }
  expect(a.stderr()).toContain(`agentbus: ${file}`);
  // Woken by the other process's commits, or by the 250 ms poll: either way it must not deliver.
  expect((await waiting).error).toMatchObject({ code: 'internal', retryable: false });
  if (b === undefined || bob === undefined) return true;

  // After the old process was refused, the new one still has every message it acknowledged, and nothing of the old one's attempt.
  const history = toolAnswer(HistoryOutput, await b.call('history', { as: bob.display_name, channel: 'work', count: 100 }), 'history');
  const seen = new Set(history.messages.map((m) => m.seq));
  for (const seq of acknowledged) expect(seen.has(seq)).toBe(true);
  expect(history.messages.some((m) => m.content === 'from the old process')).toBe(false);
  return true;
}

describe('files shared by running agents, deleted or replaced under them', () => {
  it('the database file itself, replaced by a copy (a restore while agents run)', async () => {
    expect(await deleteUnderRunningServer('', true)).toBe(true);
  });

  it('-shm (the WAL index) deleted', async () => {
    expect(await deleteUnderRunningServer('-shm', false)).toBe(true);
  });

  it("-locks (the portable protocol's lock table) deleted, where the driver has one", async () => {
    const used = await deleteUnderRunningServer('-locks', false);
    expect(used).toBe((await testDriver()).capabilities.lockProtocol === 'portable');
  });

  it('-wal deleted: the running server refuses (its uncheckpointed commits are gone for everyone else)', async () => {
    // A process started afterwards finds the WAL index pointing past the end of a new, empty -wal, and
    // SQLite refuses it with an I/O error until every process has been restarted; so none is started here.
    expect(await deleteUnderRunningServer('-wal', false, false)).toBe(true);
  });

  it('a server that stopped using the database stops its inbox monitor: its inbox file, which promised unread messages, is gone without any tool call', async () => {
    // This test process is the harness of both servers, so they keep inbox files (what `agentbus inbox` hooks read).
    const dir = tempDir();
    const a = await startMcp(dir);
    const b = await startMcp(dir);
    await a.call('register', { name: 'Ann' });
    await b.call('register', { name: 'Kim' });
    await b.call('subscribe', { as: 'Kim', channel: 'general' });
    await a.call('send', { as: 'Ann', channel: 'general', content: 'hello Kim' });
    await b.call('list_channels', { as: 'Kim' });
    const promisingKim = (): string[] =>
      readdirSync(inboxDir(dir), { withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.json') && readFileSync(join(inboxDir(dir), e.name), 'utf8').includes('hello Kim'))
        .map((e) => e.name);
    expect(promisingKim()).toHaveLength(1);

    const file = databasePath(dir);
    copyFileSync(file, join(dir, 'copy'));
    renameSync(join(dir, 'copy'), file);
    // The monitor's one-second poll notices, not a tool call: nothing is asked of b here.
    const deadline = Date.now() + 20_000;
    while (promisingKim().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(promisingKim()).toEqual([]);
    expect(b.stderr()).toContain(`agentbus: ${file}`);
    expect(await b.call('list_channels', { as: 'Kim' })).toMatchObject({ error: { code: 'internal', retryable: false } });
  });
});
