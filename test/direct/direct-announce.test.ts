/**
 * Telling the addressee of a direct message (issue 22, item 4), over real
 * `agentbus mcp` processes and real `agentbus inbox` runs (this test process
 * plays the harness of every server): the Claude Code channel event goes out
 * at once, not held behind the coalescing interval of channel traffic, and
 * says who wrote and that it is direct; the hook line names direct messages
 * before channel traffic, for every harness format; and agents the message
 * is not addressed to are told nothing and get no inbox-file rewrite.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Notification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { DIRECT_CHANNEL } from '../../src/bus/direct-addressees.js';
import { DIRECT_ENTRY, inboxDir, type InboxFile } from '../../src/harness/inbox-file.js';
import { runCli, type CliRun } from '../cli/cli-process.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

type Json = Record<string, any>;

function listen(p: McpProcess): Notification[] {
  const events: Notification[] = [];
  p.client.fallbackNotificationHandler = async (notification) => {
    events.push(notification);
  };
  return events;
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function inbox(dir: string, hookInput: Json): Promise<CliRun> {
  return runCli(dir, ['inbox', '--hook'], { input: JSON.stringify(hookInput) });
}

function hookJson(run: CliRun): Json {
  expect(run.code).toBe(0);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as Json;
}

/** The inbox file of the server holding `name`, with its modification time. */
function inboxFileOf(dir: string, name: string): { path: string; file: InboxFile; mtimeMs: number } {
  for (const entry of readdirSync(inboxDir(dir))) {
    if (!entry.endsWith('.json') || entry.startsWith('.')) continue;
    const path = join(inboxDir(dir), entry);
    const file = JSON.parse(readFileSync(path, 'utf8')) as InboxFile;
    if (file.names.some((n) => n.name === name)) return { path, file, mtimeMs: statSync(path).mtimeMs };
  }
  throw new Error(`no inbox file holds ${name}`);
}

/** Ann writes; Kim (the addressee) and Lee (a bystander) listen on general, each in a server of its own. */
async function trio(): Promise<{ dir: string; a: McpProcess; k: McpProcess; l: McpProcess; kimHeard: Notification[]; leeHeard: Notification[] }> {
  const dir = tempDir();
  const config = { send_messages_per_second: 10_000 };
  const [a, k, l] = await Promise.all([startMcp(dir, { config }), startMcp(dir, { config }), startMcp(dir, { config })]);
  const kimHeard = listen(k);
  const leeHeard = listen(l);
  await a.call('register', { name: 'Ann' });
  await k.call('register', { name: 'Kim' });
  await l.call('register', { name: 'Lee' });
  await k.call('subscribe', { as: 'Kim', channel: 'general' });
  await l.call('subscribe', { as: 'Lee', channel: 'general' });
  return { dir, a, k, l, kimHeard, leeHeard };
}

describe('telling the addressee of a direct message', () => {
  it('the inbox entry name is the bus channel of direct messages', () => {
    expect(DIRECT_ENTRY).toBe(DIRECT_CHANNEL);
  });

  it('pushes the direct message at once, right behind a channel event, marked direct with its sender; the bystander hears only the channel', async () => {
    const { a, k, l, kimHeard, leeHeard } = await trio();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'channel traffic' });
    await until(() => kimHeard.length === 1 && leeHeard.length === 1, 'the channel events');
    // A second channel message now is held behind the 2 s interval; the direct message is not.
    await a.call('send', { as: 'Ann', channel: 'general', content: 'more traffic' });
    const sentAt = Date.now();
    const { seq } = (await a.call('send', { as: 'Ann', to: ['Kim'], content: 'Kim, run the tests on your branch' })) as Json;
    await until(() => kimHeard.length === 2, 'the direct event');
    expect(Date.now() - sentAt).toBeLessThan(1500);
    const event = kimHeard[1] as unknown as { method: string; params: { content: string; meta: Record<string, string> } };
    expect(event.method).toBe('notifications/claude/channel');
    expect(event.params.meta).toEqual({ as: 'Kim', channel: DIRECT_CHANNEL, direct: 'true', sender: 'Ann', seq: String(seq), count: '1' });
    expect(event.params.content).toContain('Direct agentbus message to Kim from Ann');
    expect(event.params.content).toContain('run the tests on your branch');
    expect(event.params.content).toContain('receive with as: "Kim"');
    // Lee gets the coalesced channel event later, and never one for the direct message.
    await until(() => leeHeard.length === 2, "Lee's coalesced channel event", 5_000);
    await l.call('list_channels', { as: 'Lee' });
    expect(leeHeard.map((e) => (e.params as Json).meta.channel)).toEqual(['general', 'general']);
    // The direct event does not use up Kim's channel interval either: the held channel event still comes.
    await until(() => kimHeard.length === 3, "Kim's coalesced channel event", 5_000);
    expect(((kimHeard[2] as Json).params as Json).meta).toMatchObject({ channel: 'general', count: '2' });
    await k.call('list_channels', { as: 'Kim' });
  });

  it("names direct messages before channel traffic in every harness's hook line", async () => {
    const { dir, a, k, l } = await trio();
    await a.call('send', { as: 'Ann', channel: 'general', content: 'channel chatter' });
    const { seq } = (await a.call('send', { as: 'Ann', to: ['Kim'], content: 'only for Kim' })) as Json;
    await k.call('list_channels', { as: 'Kim' });
    const expectOrder = (text: string): void => {
      const direct = text.indexOf(`Kim has a direct message (to Kim alone), newest from Ann (seq ${seq}): "only for Kim"`);
      expect(direct).toBeGreaterThan(-1);
      expect(text.indexOf('"channel chatter"')).toBeGreaterThan(direct);
      expect(text).toContain('send to: ["Ann"]');
    };
    // Claude Code and Codex (same hook names), Gemini CLI, Cursor.
    for (const event of ['PostToolUse', 'UserPromptSubmit', 'AfterTool', 'BeforeAgent']) {
      expectOrder(hookJson(await inbox(dir, { session_id: `s-${event}`, hook_event_name: event })).hookSpecificOutput.additionalContext);
    }
    expectOrder(hookJson(await inbox(dir, { session_id: 'stop', hook_event_name: 'Stop', stop_hook_active: false })).reason);
    expectOrder(hookJson(await inbox(dir, { session_id: 'g', hook_event_name: 'AfterAgent', stop_hook_active: false })).reason);
    expectOrder(hookJson(await inbox(dir, { conversation_id: 'c', hook_event_name: 'stop', status: 'completed', loop_count: 0 })).followup_message);

    // Received, not acknowledged: the stop hook names the batch of direct messages.
    const got = (await k.call('receive', { as: 'Kim' })) as Json;
    expect(got.messages.map((m: Json) => m.content)).toEqual(['channel chatter', 'only for Kim']);
    const held = hookJson(await inbox(dir, { session_id: 'stop', hook_event_name: 'Stop', stop_hook_active: true }));
    expect(held.reason).toContain('direct messages');
    expect(held.reason).toContain(`ack: "${got.batch_token}"`);
    await k.call('receive', { as: 'Kim', ack: got.batch_token });
    // Lee (also this harness's) reads the channel message, so nothing is left for the harness.
    await l.call('receive', { as: 'Lee', ack: ((await l.call('receive', { as: 'Lee' })) as Json).batch_token });
    expect(await inbox(dir, { session_id: 'stop', hook_event_name: 'Stop', stop_hook_active: true })).toMatchObject({ code: 0, stdout: '' });
  });

  it("costs a bystander nothing visible: its inbox file is not rewritten and it is told nothing", async () => {
    const { dir, a, k, l, leeHeard } = await trio();
    await l.call('list_channels', { as: 'Lee' });
    await k.call('list_channels', { as: 'Kim' });
    const before = inboxFileOf(dir, 'Lee');
    const kimBefore = inboxFileOf(dir, 'Kim');
    for (let i = 0; i < 5; i++) await a.call('send', { as: 'Ann', to: ['Kim'], content: `direct ${i}` });
    // Kim's server rewrites its file; by then Lee's has seen every commit hint too.
    await until(() => inboxFileOf(dir, 'Kim').file.names[0]!.subscriptions[0]!.unread === 5, "Kim's inbox file");
    await new Promise((r) => setTimeout(r, 600));
    await l.call('list_channels', { as: 'Lee' });
    const after = inboxFileOf(dir, 'Lee');
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.file).toEqual(before.file);
    expect(leeHeard).toEqual([]);
    const kim = inboxFileOf(dir, 'Kim');
    expect(kim.mtimeMs).toBeGreaterThan(kimBefore.mtimeMs);
    expect(kim.file.names[0]!.subscriptions.map((s) => s.channel)).toEqual([DIRECT_ENTRY, 'general']);
  });
});
