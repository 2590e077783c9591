import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { startCli } from './cli-follow.js';
import { memoryIo, prepareCliDir, runCli } from './cli-process.js';

/** Alice and Bob on channel `work` (Bob subscribed), plus a channel `other`. */
async function twoAgents(dir: string): Promise<McpProcess> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('register', { name: 'Bob' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('create_channel', { as: 'Alice', name: 'other', kind: 'ordinary' });
  await server.call('subscribe', { as: 'Bob', channel: 'work' });
  return server;
}

const seqOf = (r: Record<string, unknown>): number => r.seq as number;

describe('agentbus tail', () => {
  it('shows the recent messages with replies under their thread, then exits with --once', async () => {
    const dir = tempDir();
    const server = await twoAgents(dir);
    const first = seqOf(await server.call('send', { as: 'Alice', channel: 'work', content: 'shall we ship?' }));
    await server.call('send', { as: 'Alice', channel: 'other', content: 'unrelated' });
    await server.call('send', { as: 'Bob', channel: 'work', content: 'yes, ship it', reply_to: first });

    const run = await runCli(dir, ['tail', '--once']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    const question = lines.findIndex((l) => /#work \[\d+\] Alice$/.test(l));
    expect(lines[question + 1]).toBe('    shall we ship?');
    // The reply comes right under its parent, indented, though "unrelated" was sent between them.
    expect(lines[question + 2]).toMatch(new RegExp(`^  \\S+ \\S+ #work \\[\\d+\\] Bob ↳ re ${first}$`));
    expect(lines[question + 3]).toBe('      yes, ship it');
    expect(run.stdout).toMatch(/#other \[\d+\] Alice\n    unrelated/);
  });

  it('prints one JSON object per message with --json, filtered by channel, sender, since and count', async () => {
    const dir = tempDir();
    const server = await twoAgents(dir);
    for (let i = 1; i <= 5; i++) await server.call('send', { as: i % 2 === 0 ? 'Bob' : 'Alice', channel: i === 5 ? 'other' : 'work', content: `m${i}` });

    const all = await runCli(dir, ['tail', '--once', '--json']);
    expect(all.code).toBe(0);
    const messages = all.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(messages.map((m) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(messages[0]).toMatchObject({ channel: 'work', sender: 'Alice', reply_to: null, metadata: {}, references: [] });
    expect(Date.parse(messages[0].created_at)).not.toBeNaN();

    const contents = async (args: string[]): Promise<string[]> => {
      const run = await runCli(dir, ['tail', '--once', '--json', ...args]);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout === '' ? [] : run.stdout.trim().split('\n').map((l) => JSON.parse(l).content);
    };
    expect(await contents(['work'])).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(await contents(['--channel', 'other', '--channel', 'work', '--sender', 'Bob'])).toEqual(['m2', 'm4']);
    expect(await contents(['--lines', '2'])).toEqual(['m4', 'm5']);
    expect(await contents(['--since', '1h'])).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(await contents(['--since', '2099-01-01T00:00:00Z'])).toEqual([]);
  });

  it('refuses a mistyped channel, a bad --since and a bad --lines, naming the fix', async () => {
    const dir = tempDir();
    await twoAgents(dir);
    const typo = await runCli(dir, ['tail', 'wrok', '--once']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/no channel "wrok" \(did you mean "work"\?\)/);
    const since = await runCli(dir, ['tail', '--since', 'yesterday']);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/--since "yesterday".*--since 10m/);
    const lines = await runCli(dir, ['tail', '--lines', '0']);
    expect(lines.code).toBe(2);
    expect(lines.stderr).toMatch(/--lines must be a whole number/);
    const empty = tempDir();
    prepareCliDir(empty);
    const none = await runCli(empty, ['tail']);
    expect(none.code).toBe(1);
    // No file in the data directory, or no schema on the server its database_url names.
    expect(none.stderr).toMatch(/no bus (database at|on) .*agentbus mcp/);
  });

  it('follows new messages as another process commits them, without registering or moving any cursor', async () => {
    const dir = tempDir();
    const server = await twoAgents(dir);
    await server.call('send', { as: 'Alice', channel: 'work', content: 'before tail' });
    const tail = startCli(dir, ['tail', 'work']);
    await tail.waitFor(/before tail/);

    await server.call('send', { as: 'Alice', channel: 'other', content: 'not for this tail' });
    const asked = seqOf(await server.call('send', { as: 'Alice', channel: 'work', content: 'live one' }));
    await tail.waitFor(/live one/);
    await server.call('send', { as: 'Bob', channel: 'work', content: 'live reply', reply_to: asked });
    await tail.waitFor(/live reply/);
    expect(tail.stdout()).toMatch(new RegExp(`  \\S+ \\S+ #work \\[\\d+\\] Bob ↳ re ${asked}\\n      live reply`));
    expect(tail.stdout()).not.toMatch(/not for this tail/);

    const status = await runCli(dir, ['status', '--json']);
    expect(JSON.parse(status.stdout).sessions.map((s: { display_name: string }) => s.display_name)).toEqual(['Alice', 'Bob']);
    expect(await tail.stop()).toBe(0);
    expect(tail.stderr()).toBe('');
    // Bob's cursor never moved: he still receives everything on work that he did not send.
    const got = (await server.call('receive', { as: 'Bob', channels: ['work'], wait_seconds: 0 })) as { messages: { content: string }[] };
    expect(got.messages.map((m) => m.content)).toEqual(['before tail', 'live one']);
  });

  it('shows control characters in agents text as escapes, and colours only a terminal without NO_COLOR', async () => {
    const dir = tempDir();
    const server = await twoAgents(dir);
    await server.call('send', { as: 'Alice', channel: 'work', content: 'red \u001b[31malert\u001b[0m \u202eevil' });
    const run = await runCli(dir, ['tail', '--once']);
    expect(run.stdout).toContain('red \\x1b[31malert\\x1b[0m \\u{202e}evil');
    expect(run.stdout).not.toContain('\u001b');

    prepareCliDir(dir);
    const tty = memoryIo(dir, { isTty: true });
    expect(await main(['tail', '--once'], tty)).toBe(0);
    expect(tty.out()).toMatch(/\u001b\[36m#work\u001b\[0m/);
    expect(tty.out()).toContain('red \\x1b[31malert');
    const noColor = memoryIo(dir, { isTty: true });
    (noColor.env as Record<string, string>).NO_COLOR = '1';
    expect(await main(['tail', '--once'], noColor)).toBe(0);
    expect(noColor.out()).not.toContain('\u001b');
  });
});
