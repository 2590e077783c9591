/**
 * `agentbus inbox` against real `agentbus mcp` servers. The servers and the
 * inbox runs are children of this test process, which therefore plays the
 * harness: the inbox finds the servers' names through the process tree.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli, type CliRun } from '../cli/cli-process.js';
import { fixturePath } from '../support/child-process.js';
import { AGENTBUS_BIN, startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir, testDriverEnv } from '../support/test-driver.js';

type Json = Record<string, any>;

function inbox(dir: string, args: readonly string[] = [], hookInput?: Json): Promise<CliRun> {
  return runCli(dir, ['inbox', ...args], hookInput === undefined ? {} : { input: JSON.stringify(hookInput) });
}

function hookJson(run: CliRun): Json {
  expect(run.code).toBe(0);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as Json;
}

async function setup(): Promise<{ dir: string; a: McpProcess; b: McpProcess }> {
  const dir = tempDir();
  const a = await startMcp(dir);
  const b = await startMcp(dir);
  await a.call('register', { name: 'Ann' });
  await b.call('register', { name: 'Kim' });
  await b.call('subscribe', { as: 'Kim', channel: 'general' });
  // Ann listens too, so both servers' names are this harness's.
  await a.call('subscribe', { as: 'Ann', channel: 'general' });
  return { dir, a, b };
}

const EVENTS = ['UserPromptSubmit', 'PostToolUse', 'Stop', 'BeforeAgent', 'AfterTool', 'AfterAgent'];

describe('agentbus inbox', () => {
  it('prints nothing at all when nothing is unread, plain or for any hook event, and exits 0', async () => {
    const { dir } = await setup();
    for (const run of [await inbox(dir), ...(await Promise.all(EVENTS.map((e) => inbox(dir, ['--hook'], { hook_event_name: e, session_id: 's' }))))]) {
      expect(run).toMatchObject({ code: 0, stdout: '' });
    }
  });

  it("names what is unread for this harness's agents: count, newest sender and preview per channel, and the call that reads it", async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'first\nof two' });
    const { seq } = (await a.call('send', { as: 'Ann', channel: 'general', content: 'please look at PR 7' })) as Json;
    await b.call('list_channels', { as: 'Kim' });
    const run = await inbox(dir);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toContain(`For Kim: 2 unread on "general", newest from Ann (seq ${seq}): "please look at PR 7"`);
    expect(run.stdout).toContain('Call receive with as: "Kim"');
    expect(run.stdout).toMatch(/untrusted/);
    // Ann's own messages are not unread for her.
    expect(run.stdout).not.toContain('For Ann');
  });

  it('Claude Code and Codex formats: context on prompt and tool events, a tool nudge once per new message, a blocked Stop until received and acknowledged', async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'hello Kim' });
    await b.call('list_channels', { as: 'Kim' });
    const session = { session_id: 'claude-1' };

    const post = hookJson(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'PostToolUse', tool_name: 'Bash' }));
    expect(post.hookSpecificOutput.hookEventName).toBe('PostToolUse');
    expect(post.hookSpecificOutput.additionalContext).toContain('"hello Kim"');
    // The same unread messages are not repeated after the next tool call...
    expect(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'PostToolUse' })).toMatchObject({ code: 0, stdout: '' });
    // ...but a new one is, and a user prompt always hears what is unread.
    await a.call('send', { as: 'Ann', channel: 'general', content: 'and another' });
    await b.call('list_channels', { as: 'Kim' });
    expect(hookJson(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'PostToolUse' })).hookSpecificOutput.additionalContext).toContain('2 unread');
    const prompt = hookJson(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'UserPromptSubmit', prompt: 'go on' }));
    expect(prompt.hookSpecificOutput).toMatchObject({ hookEventName: 'UserPromptSubmit' });

    const stop = hookJson(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'Stop', stop_hook_active: false }));
    expect(stop.decision).toBe('block');
    expect(stop.reason).toContain('"and another"');
    // An agent that ignored the reason is let go rather than looped.
    expect(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'Stop', stop_hook_active: true })).toMatchObject({ stdout: '' });

    const got = (await b.call('receive', { as: 'Kim' })) as Json;
    expect(got.messages).toHaveLength(2);
    // Right after the receive, nothing it delivered is reported as unread...
    expect(await inbox(dir, ['--hook'], { session_id: 'other', hook_event_name: 'PostToolUse' })).toMatchObject({ stdout: '' });
    // ...but stopping with the batch unacknowledged is blocked once, naming the token.
    const unacked = hookJson(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'Stop', stop_hook_active: true }));
    expect(unacked.reason).toContain(`ack: "${got.batch_token}"`);
    await b.call('receive', { as: 'Kim', ack: got.batch_token });
    expect(await inbox(dir, ['--hook'], { ...session, hook_event_name: 'Stop', stop_hook_active: true })).toMatchObject({ code: 0, stdout: '' });
  });

  it('Gemini CLI and Cursor formats: AfterTool and BeforeAgent add context, AfterAgent denies with the reason, Cursor stop follows up', async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'for gemini' });
    await b.call('list_channels', { as: 'Kim' });
    for (const event of ['AfterTool', 'BeforeAgent']) {
      const out = hookJson(await inbox(dir, ['--hook'], { session_id: `g-${event}`, hook_event_name: event }));
      expect(out.hookSpecificOutput).toMatchObject({ hookEventName: event });
      expect(out.hookSpecificOutput.additionalContext).toContain('"for gemini"');
    }
    const after = hookJson(await inbox(dir, ['--hook'], { session_id: 'g', hook_event_name: 'AfterAgent', stop_hook_active: false }));
    expect(after).toEqual({ decision: 'deny', reason: expect.stringContaining('"for gemini"') });
    // Cursor's stop hook continues the agent with a follow-up message, once per unread state.
    const cursor = { conversation_id: 'cursor-1', hook_event_name: 'stop', status: 'completed', loop_count: 0 };
    expect(hookJson(await inbox(dir, ['--hook'], cursor))).toEqual({ followup_message: expect.stringContaining('"for gemini"') });
    expect(await inbox(dir, ['--hook'], { ...cursor, loop_count: 1 })).toMatchObject({ code: 0, stdout: '' });
  });

  it('with --wait, a stop hook idles until a message arrives, then blocks; with nothing arriving it lets the agent stop', async () => {
    const { dir, a, b } = await setup();
    const quiet = await inbox(dir, ['--hook', '--wait', '1'], { session_id: 'w', hook_event_name: 'Stop' });
    expect(quiet).toMatchObject({ code: 0, stdout: '' });
    const waiting = inbox(dir, ['--hook', '--wait', '60'], { session_id: 'w', hook_event_name: 'Stop' });
    await new Promise((r) => setTimeout(r, 1500));
    await a.call('send', { as: 'Ann', channel: 'general', content: 'wake up' });
    const woken = hookJson(await waiting);
    expect(woken.decision).toBe('block');
    expect(woken.reason).toContain('"wake up"');
    expect(((await b.call('receive', { as: 'Kim' })) as Json).messages).toHaveLength(1);
  });

  it('is read-only: no batch, no cursor move, no registration', async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'still mine to receive' });
    await b.call('list_channels', { as: 'Kim' });
    for (const event of EVENTS) await inbox(dir, ['--hook'], { session_id: 'ro', hook_event_name: event });
    await inbox(dir);
    const got = (await b.call('receive', { as: 'Kim' })) as Json;
    expect(got).toMatchObject({ redelivered: false, messages: [expect.objectContaining({ content: 'still mine to receive' })] });
    expect(((await b.call('discover', { as: 'Kim' })) as Json).sessions.map((s: Json) => s.display_name)).toEqual(['Ann', 'Kim']);
  });

  it("finds only its own harness's names through the process tree", async () => {
    const { dir, a } = await setup();
    const other = spawn(process.execPath, [fixturePath('harness-child.js'), 'Zoe'], {
      env: { ...process.env, AGENTBUS_DATA_DIR: dir, AGENTBUS_CONFIG: join(dir, 'config.json'), ...testDriverEnv(dir) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    other.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    other.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    try {
      const deadline = Date.now() + 30_000;
      while (!out.includes('ready\n')) {
        if (other.exitCode !== null || Date.now() > deadline) throw new Error(`the other harness did not start: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await a.call('send', { as: 'Ann', channel: 'general', content: 'to everyone' });
      await new Promise((r) => setTimeout(r, 1500));
      const mine = await inbox(dir);
      expect(mine.stdout).toContain('For Kim');
      expect(mine.stdout).not.toContain('Zoe');
      other.stdin.write('inbox\n');
      while (out.split('\n').length < 3) {
        if (other.exitCode !== null || Date.now() > deadline) throw new Error(`no inbox answer from the other harness: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const theirs = JSON.parse(out.split('\n')[1]!) as Json;
      expect(theirs.code).toBe(0);
      expect(theirs.stdout).toContain('For Zoe');
      expect(theirs.stdout).not.toContain('Kim');
    } finally {
      // Its stdin closed, the stand-in harness closes its server and waits for it, so nothing writes
      // into dir once it has exited (killing it at once left the server writing while dir was removed).
      other.stdin.end();
      if (other.exitCode === null) await Promise.race([once(other, 'exit'), new Promise((r) => setTimeout(r, 10_000))]);
      if (other.exitCode === null) other.kill();
    }
  });

  it('answers a harness that writes its hook JSON and never closes stdin, then exits on its own', async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'hello Kim' });
    await b.call('list_channels', { as: 'Kim' });
    const child = spawn(process.execPath, [AGENTBUS_BIN, 'inbox', '--hook'], { env: cliEnv(dir), cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const closed = once(child, 'close');
    child.stdin.write(JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 'open-stdin' }));
    // stdin stays open: the command stops waiting for its end (3 s), answers from what it read, and
    // exits although the pipe is still open. (A read of it left in flight on the thread pool would
    // keep even process.exit() from ending the process: that is why it is read as a stream.)
    const [code] = (await closed) as [number | null];
    child.stdin.destroy();
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as Json).hookSpecificOutput.additionalContext).toContain('"hello Kim"');
  });

  it('never breaks its harness: bad flags, bad config, garbage input, a dead server -> nothing on stdout, exit 0', async () => {
    const { dir, a, b } = await setup();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'unread' });
    await b.call('list_channels', { as: 'Kim' });
    const unknownFlag = await inbox(dir, ['--hok']);
    expect(unknownFlag).toMatchObject({ code: 0, stdout: '' });
    expect(unknownFlag.stderr).toContain('--hok');
    expect(await inbox(dir, ['--hook', '--wait', 'soon'], { hook_event_name: 'Stop' })).toMatchObject({ code: 0, stdout: '' });
    expect((await inbox(dir, ['--hook'], { hook_event_name: 'Stop' })).stdout).not.toBe('');
    for (const input of ['not json', '[1,2]', JSON.stringify({ hook_event_name: 'Unknown' })]) {
      const run = await runCli(dir, ['inbox', '--hook'], { input });
      expect(run).toMatchObject({ code: 0, stdout: '' });
    }
    writeFileSync(join(dir, 'config.json'), '{"push": "yes"}');
    const badConfig = await inbox(dir);
    expect(badConfig).toMatchObject({ code: 0, stdout: '' });
    expect(badConfig.stderr).toContain('push');
    writeFileSync(join(dir, 'config.json'), '{}');

    // A server killed outright leaves its file; readers ignore it, the next server removes it.
    const files = readdirSync(join(dir, 'inbox')).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(2);
    process.kill(b.transport.pid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    expect(files.every((f) => existsSync(join(dir, 'inbox', f)))).toBe(true);
    expect(await inbox(dir)).toMatchObject({ code: 0, stdout: '' });
    // The reason goes to the log (the file logger is a bundle of its own, loaded only for this).
    const logged = readFileSync(join(dir, 'agentbus.log'), 'utf8').split('\n').filter((l) => l.includes('inbox files skipped'));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.at(-1)).toContain('its server has exited');
    const next = await startMcp(dir);
    // The server answers initialize before it opens the bus; a tool's answer means the monitor has started.
    await next.call('register', { name: 'Lee' });
    // The killed server's file is gone, the live one's stays (Lee's server now writes its own).
    expect(files.filter((f) => existsSync(join(dir, 'inbox', f)))).toHaveLength(1);
  });
});
