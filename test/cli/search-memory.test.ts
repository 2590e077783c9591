import { describe, expect, it } from 'vitest';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { jsonOf, runCli } from './cli-process.js';

/** Alice with an ordinary channel `work` and a memory channel `notes`. */
async function agent(dir: string): Promise<McpProcess> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('create_channel', { as: 'Alice', name: 'notes', kind: 'memory' });
  return server;
}

const jsonLines = (stdout: string): any[] => (stdout === '' ? [] : stdout.trim().split('\n').map((l) => JSON.parse(l)));

describe('agentbus search', () => {
  it('returns what the search tool returns, in the same order, with the same filters, without registering', async () => {
    const dir = tempDir();
    const server = await agent(dir);
    await server.call('send', { as: 'Alice', channel: 'work', content: 'the flaky test in ci is the retry loop' });
    await server.call('send', { as: 'Alice', channel: 'work', content: 'lunch at noon' });
    await server.call('send', { as: 'Alice', channel: 'notes', content: 'flaky: rerun with --seed to reproduce the flaky test' });

    for (const [args, input] of [
      [['flaky', 'test'], { query: 'flaky test' }],
      [['flaky', '--channel', 'work'], { query: 'flaky', channel: 'work' }],
      [['flaky', '--count', '1'], { query: 'flaky', count: 1 }],
    ] as const) {
      const run = await runCli(dir, ['search', ...args, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const tool = await server.call('search', { as: 'Alice', ...input });
      expect(jsonOf(run)).toEqual(tool);
    }
    const text = await runCli(dir, ['search', 'flaky']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/#notes \[\d+\] Alice memory \d+ rev 1\n    flaky: rerun/);
    expect(text.stdout).toMatch(/2 results \(text\)\n$/);
    const paged = await runCli(dir, ['search', 'flaky', '--count', '1']);
    expect(paged.stdout).toMatch(/more: add --continuation \S+/);
    const none = await runCli(dir, ['search', 'flaky', '--since', '2099-01-01']);
    expect(none.stdout).toBe('0 results (text)\n');

    const sessions = (await server.call('discover', { as: 'Alice' })) as { sessions: { display_name: string }[] };
    expect(sessions.sessions.map((s) => s.display_name)).toEqual(['Alice']);
  });

  it('refuses bad input with the tool message and exit 2, and an unknown channel with exit 1', async () => {
    const dir = tempDir();
    await agent(dir);
    const empty = await runCli(dir, ['search']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no query/);
    const mode = await runCli(dir, ['search', 'x', '--mode', 'fuzzy']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/validation: .*mode/);
    const channel = await runCli(dir, ['search', 'x', '--channel', 'nowhere']);
    expect(channel.code).toBe(1);
    expect(channel.stderr).toMatch(/not_found: .*nowhere/);
  });
});

describe('agentbus memory', () => {
  it('lists live memories, shows one as get_memory does, and lists every revision with the live one marked', async () => {
    const dir = tempDir();
    const server = await agent(dir);
    const kept = (await server.call('send', { as: 'Alice', channel: 'notes', content: 'build with make -j2' })).memory_id as number;
    const gone = (await server.call('send', { as: 'Alice', channel: 'notes', content: 'obsolete' })).memory_id as number;
    await server.call('send', { as: 'Alice', channel: 'work', content: 'not a memory' });
    await server.call('edit_memory', { as: 'Alice', memory_id: kept, content: 'build with make -j4' });
    await server.call('delete_memory', { as: 'Alice', memory_id: gone });

    const list = await runCli(dir, ['memory', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(jsonLines(list.stdout).map((m) => [m.memory_id, m.revision, m.content])).toEqual([[kept, 2, 'build with make -j4']]);
    const listText = await runCli(dir, ['memory', 'list']);
    expect(listText.stdout).toMatch(/#notes \[\d+\] Alice memory \d+ rev 2\n    build with make -j4\n1 memory\n$/);

    const show = await runCli(dir, ['memory', 'show', String(kept), '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(jsonOf(show)).toEqual(await server.call('get_memory', { as: 'Alice', memory_id: kept }));

    const history = await runCli(dir, ['memory', 'history', String(kept), '--json']);
    expect(jsonLines(history.stdout).map((m) => [m.revision, m.content, m.live])).toEqual([
      [1, 'build with make -j2', false],
      [2, 'build with make -j4', true],
    ]);
    const historyText = await runCli(dir, ['memory', 'history', String(kept)]);
    expect(historyText.stdout).toMatch(/rev 1 \(replaced or deleted\)\n    build with make -j2\n.*rev 2 \(live\)\n    build with make -j4/);

    const deleted = await runCli(dir, ['memory', 'show', String(gone)]);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toMatch(/not_found: memory_id: memory \d+ was deleted/);
    const deletedHistory = await runCli(dir, ['memory', 'history', String(gone), '--json']);
    expect(jsonLines(deletedHistory.stdout).map((m) => m.live)).toEqual([false]);
  });

  it('refuses an unknown action, a missing or bad ID, and a seq that is not a memory, naming the fix', async () => {
    const dir = tempDir();
    const server = await agent(dir);
    const plain = (await server.call('send', { as: 'Alice', channel: 'work', content: 'ordinary' })).seq as number;
    const cases: [string[], number, RegExp][] = [
      [['memory', 'edit', '1'], 2, /unknown action "edit"/],
      [['memory', 'show'], 2, /needs a memory ID/],
      [['memory', 'history', 'x1'], 2, /must be a whole number/],
      [['memory', 'show', String(plain)], 1, /is an ordinary message, not a memory/],
      [['memory', 'history', '99999'], 1, /no memory 99999/],
    ];
    for (const [args, code, message] of cases) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr).toMatch(message);
    }
  });
});
