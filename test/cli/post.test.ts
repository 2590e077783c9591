import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BELL_FILE } from '../../src/bus/change-waiter.js';
import { fixturePath } from '../support/child-process.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { jsonOf, runCli } from './cli-process.js';

/** Bob registered and subscribed to `work`. */
async function listener(dir: string, config: Record<string, unknown> = {}): Promise<McpProcess> {
  const server = await startMcp(dir, { config });
  await server.call('register', { name: 'Bob' });
  await server.call('create_channel', { as: 'Bob', name: 'work', kind: 'ordinary' });
  await server.call('subscribe', { as: 'Bob', channel: 'work' });
  return server;
}

type Received = { messages: { seq: number; content: string; sender: string; reply_to: number | null }[] };

describe('agentbus post', () => {
  it('sends as the OS user by default, or --as, and an agent receives it like any message; the name is released after', async () => {
    const dir = tempDir();
    const bob = await listener(dir);
    const mine = await runCli(dir, ['post', 'work', 'deploy is frozen', '--json'], { env: { USER: 'carol' } });
    expect(mine.code, mine.stderr).toBe(0);
    const sent = jsonOf(mine);
    expect(sent).toEqual({ seq: expect.any(Number), as: 'carol', channel: 'work' });
    const text = await runCli(dir, ['post', 'work', '--as', 'Dana', '42']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^sent \d+ to #work as Dana\n$/);

    const got = (await bob.call('receive', { as: 'Bob', wait_seconds: 0 })) as Received;
    expect(got.messages.map((m) => [m.sender, m.content])).toEqual([
      ['carol', 'deploy is frozen'],
      ['Dana', '42'],
    ]);
    expect(got.messages[0]?.seq).toBe(sent.seq);
    const sessions = (await bob.call('discover', { as: 'Bob' })) as { sessions: { display_name: string }[] };
    expect(sessions.sessions.map((s) => s.display_name)).toEqual(['Bob']);
  });

  it("reaches a peer's waiting receive, and wakes waiters after its commit as a send from agentbus mcp does (the bell file, or the commit's NOTIFY)", async () => {
    const dir = tempDir();
    const bob = await listener(dir);
    const bell = join(dir, BELL_FILE);
    // Whatever touched the bell before is pushed into the past, so only the post can bring it back.
    const past = new Date('2001-01-01T00:00:00Z');
    if (existsSync(bell)) utimesSync(bell, past, past);
    const waiting = bob.call('receive', { as: 'Bob', wait_seconds: 10 });
    const startedAt = Date.now();
    const run = await runCli(dir, ['post', 'work', 'are you there?', '--as', 'Dana', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const got = (await waiting) as Received;
    expect(got.messages.map((m) => [m.sender, m.content, m.seq])).toEqual([['Dana', 'are you there?', jsonOf(run).seq]]);
    const opened = await openTestDatabase(dir);
    const wakeups = opened.db.capabilities.wakeups;
    opened.db.close();
    if (wakeups === 'bell-file') {
      // Rung: created or touched by the post (mtime within this test, well after the past set above).
      expect(existsSync(bell)).toBe(true);
      expect(statSync(bell).mtimeMs).toBeGreaterThan(past.getTime());
      expect(statSync(bell).mtimeMs).toBeGreaterThanOrEqual(startedAt - 1000);
    } else {
      // A 'notify' commit woke the receive by itself (commit-wake.ts): the bell file is left as it was.
      expect(existsSync(bell) ? statSync(bell).mtimeMs : past.getTime()).toBe(past.getTime());
    }
  });

  it('reads the text from stdin, and replies with --reply-to', async () => {
    const dir = tempDir();
    const bob = await listener(dir);
    const asked = (await bob.call('send', { as: 'Bob', channel: 'work', content: 'anyone?' })).seq as number;
    const run = await runCli(dir, ['post', 'work', '--as', 'Dana', '--reply-to', String(asked)], { input: 'line one\nline two\n' });
    expect(run.code, run.stderr).toBe(0);
    const history = (await bob.call('history', { as: 'Bob', channel: 'work' })) as Received;
    expect(history.messages.at(-1)).toMatchObject({ sender: 'Dana', content: 'line one\nline two', reply_to: asked });
  });

  it('replays a retried idempotency key and refuses the key for other text (exit 3), sending once', async () => {
    const dir = tempDir();
    const bob = await listener(dir);
    const args = ['post', 'work', 'once only', '--as', 'Dana', '--idempotency-key', 'k1', '--json'];
    const first = jsonOf(await runCli(dir, args));
    const again = jsonOf(await runCli(dir, args));
    expect(again.seq).toBe(first.seq);
    const other = await runCli(dir, ['post', 'work', 'different', '--as', 'Dana', '--idempotency-key', 'k1']);
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(/^agentbus: conflict: /);
    const got = (await bob.call('receive', { as: 'Bob', wait_seconds: 0 })) as Received;
    expect(got.messages.map((m) => m.content)).toEqual(['once only']);
  });

  it('runs the inspection hook: a denial exits 3 with its reason and sends nothing', async () => {
    const dir = tempDir();
    const record = join(dir, 'hook-input.json');
    const bob = await listener(dir, { inspection_command: [process.execPath, fixturePath('hooks/hook.js'), 'deny', 'no secrets'] });
    const denied = await runCli(dir, ['post', 'work', 'AKIA...', '--as', 'Dana']);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/^agentbus: inspection_rejected: .*no secrets/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ inspection_command: [process.execPath, fixturePath('hooks/hook.js'), 'record', record] }));
    const allowed = await runCli(dir, ['post', 'work', 'fine', '--as', 'Dana']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({ operation: 'send', sender: 'Dana', payload: { channel: 'work', content: 'fine' } });
    const got = (await bob.call('receive', { as: 'Bob', wait_seconds: 0 })) as Received;
    expect(got.messages.map((m) => m.content)).toEqual(['fine']);
  });

  it('refuses bad input naming the fix, and changes nothing', async () => {
    const dir = tempDir();
    const bob = await listener(dir);
    const missing = await runCli(dir, ['post', 'nowhere', 'hi', '--as', 'Dana']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not_found: channel: no channel "nowhere"/);
    const reply = await runCli(dir, ['post', 'work', 'hi', '--as', 'Dana', '--reply-to', 'abc']);
    expect(reply.code).toBe(2);
    expect(reply.stderr).toMatch(/--reply-to must be the seq/);
    const future = await runCli(dir, ['post', 'work', 'hi', '--as', 'Dana', '--reply-to', '999999']);
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/validation: .*reply_to/);
    const empty = await runCli(dir, ['post', 'work', '', '--as', 'Dana']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/content/);
    const got = (await bob.call('receive', { as: 'Bob', wait_seconds: 0 })) as Received;
    expect(got.messages).toEqual([]);
  });
});
