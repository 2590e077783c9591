import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';
import { jsonOf, memoryIo, prepareCliDir, runCli } from './cli-process.js';

async function busWithTraffic(dir: string) {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('send', { as: 'Alice', channel: 'work', content: 'hello' });
  return server;
}

describe('agentbus reset', () => {
  it('refuses without a terminal and without --yes, exit 3, changing nothing', async () => {
    const dir = tempDir();
    const server = await busWithTraffic(dir);
    const run = await runCli(dir, ['reset']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/--yes/);
    const status = jsonOf(await runCli(dir, ['status', '--json']));
    expect(status.sessions).toHaveLength(1);
    expect(status.channels.find((c: { name: string }) => c.name === 'work')?.messages).toBe(1);
    expect((await server.call('send', { as: 'Alice', channel: 'work', content: 'still here' })).seq).toEqual(expect.any(Number));
  });

  it('with --yes warns about live sessions, wipes everything, keeps the file, and the live process recovers by registering', async () => {
    const dir = tempDir();
    const server = await busWithTraffic(dir);
    const run = await runCli(dir, ['reset', '--yes']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/1 live session/);
    expect(run.stderr).toMatch(/Alice/);
    expect(run.stdout).toMatch(/deleted 1 message/);
    const status = jsonOf(await runCli(dir, ['status', '--json']));
    expect(status.database.exists).toBe(true);
    expect(status.sessions).toEqual([]);
    // Reset leaves only the default channels.
    expect(status.channels.map((c: { name: string }) => c.name)).toEqual(['general', 'memory']);

    const lost = toolAnswer(ToolError, await server.call('send', { as: 'Alice', channel: 'work', content: 'after reset' }), 'send');
    expect(lost.error.code).toBe('not_registered');
    expect((await server.call('register', { name: 'Alice' })).display_name).toBe('Alice');
  });

  it('asks on a terminal: "n" refuses with exit 3, "y" wipes', async () => {
    const dir = tempDir();
    const server = await busWithTraffic(dir);
    const no = memoryIo(dir, { input: 'n\n', stdinIsTty: true });
    expect(await main(['reset'], no)).toBe(3);
    expect(no.err()).toMatch(/\[y\/N\]/);
    expect(jsonOf(await runCli(dir, ['status', '--json'])).sessions).toHaveLength(1);

    const yes = memoryIo(dir, { input: 'y\n', stdinIsTty: true });
    expect(await main(['reset'], yes)).toBe(0);
    expect(yes.out()).toMatch(/deleted/);
    expect(jsonOf(await runCli(dir, ['status', '--json'])).sessions).toEqual([]);
    await server.close();
  });

  it('says there is nothing to reset when there is no database (no file, or no bus on the server)', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const run = await runCli(dir, ['reset']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/nothing to reset/);
  });
});
