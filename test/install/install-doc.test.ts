import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { identityLine, readIdentity } from '../../src/cli/identity-line.js';
import { hookKind } from '../../src/harness/hook-events.js';
import { ConfigFileSchema } from '../../src/config.js';
import { installedAgentbus, type InstalledAgentbus } from '../support/installed-agentbus.js';
import { tempDir, testDriverEnv } from '../support/test-driver.js';
import { CHECKOUT_PLACEHOLDER, REPO_ROOT, installSnippets, localised, parseTomlSubset, shellWords, snippet } from './doc-snippets.js';

type Json = Record<string, any>;
const snippets = installSnippets();
/** The snippets that wire `agentbus inbox --hook` into a harness (Claude Code, Codex, Gemini CLI, Cursor). */
const INBOX_HOOK_SNIPPETS = ['claude-inbox-hooks', 'codex-inbox-hooks', 'gemini-inbox-settings', 'cursor-inbox-hooks'];

/** Every hook command of a snippet, by event: Claude Code, Codex and Gemini nest them in `hooks`, Cursor lists them flat. */
function hookCommands(config: Json): { event: string; entry: Json }[] {
  return Object.entries(config.hooks as Record<string, Json[]>).flatMap(([event, entries]) =>
    entries.flatMap((entry) => (Array.isArray(entry.hooks) ? (entry.hooks as Json[]) : [entry]).map((hook) => ({ event, entry: hook }))),
  );
}

/** The largest receive_max_wait_seconds the config accepts: a harness tool timeout must exceed it. */
function maxReceiveWaitSeconds(): number {
  const pipe = (ConfigFileSchema.entries.receive_max_wait_seconds as any).wrapped.pipe as Json[];
  const max = pipe.find((a) => a.type === 'max_value')?.requirement;
  if (typeof max !== 'number') throw new Error('receive_max_wait_seconds has no maxValue');
  return max;
}

/**
 * `npx --package agentbus-mcp agentbus ...` runs the package's `agentbus` bin:
 * the installed command stands in for it (npx would fetch the package).
 */
function throughNpx(words: readonly string[], agentbus: InstalledAgentbus): string[] {
  if (words[0] !== 'npx') return [...words];
  expect(words.slice(0, 4)).toEqual(['npx', '--package', 'agentbus-mcp', 'agentbus']);
  return [agentbus.command, ...words.slice(4)];
}

/** Starts `command args` exactly as a harness would (placeholder replaced, `agentbus` installed on PATH) and lists the tools. */
async function serverTools(command: string, args: readonly string[]): Promise<string[]> {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.json'), '{}');
  const agentbus = installedAgentbus();
  [command = '', ...args] = throughNpx([command, ...args], agentbus);
  const transport = new StdioClientTransport({
    command,
    args: args.map(localised),
    env: {
      ...getDefaultEnvironment(),
      // The harness's PATH decides which node runs; here it is the test's own, with the installed `agentbus`.
      PATH: agentbus.path(),
      AGENTBUS_DATA_DIR: dir,
      AGENTBUS_CONFIG: join(dir, 'config.json'),
      ...testDriverEnv(dir),
    },
    stderr: 'pipe',
    cwd: dir,
  });
  const client = new Client({ name: 'install-doc-test', version: '0' });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

/** Runs a hook command through a shell in `cwd`, with `agentbus` installed on PATH and the tests' Node; `input` is its stdin. */
function runHook(command: string, cwd: string, input = ''): string {
  return execFileSync('/bin/sh', ['-c', localised(command)], {
    cwd,
    encoding: 'utf8',
    input,
    env: { PATH: installedAgentbus().path(), HOME: cwd, ...testDriverEnv(join(cwd, '.agentbus')) },
  });
}

describe('docs/install.md', () => {
  it('has every snippet the tests check, and never tells anyone to fetch the unrelated npm package', () => {
    const ids = [
      'npm-install',
      'claude-mcp-add',
      'claude-mcp-add-npx',
      'claude-mcp-add-checkout',
      'claude-settings',
      'codex-config',
      'codex-hooks',
      'gemini-settings',
      'cursor-mcp',
      'identity-file',
      'identity-line',
      'gitignore',
      'agents-md',
      ...INBOX_HOOK_SNIPPETS,
      'claude-listener-hooks',
      'claude-channels',
      // Checked by guard-doc.test.ts.
      'guard-install',
      'guard-hook-line',
    ];
    expect([...snippets.keys()].sort()).toEqual([...ids].sort());
    // `npx agentbus` alone would fetch the registry's unrelated `agentbus`: npx must name this package.
    let npxUses = 0;
    for (const { text } of snippets.values()) {
      for (const m of text.matchAll(/\bnpx\b(?: -y)? ([^\n"]*)/g)) {
        npxUses++;
        expect(m[1]).toMatch(/^--package agentbus-mcp agentbus /);
      }
    }
    expect(npxUses).toBeGreaterThan(0);
    // The same for every npx command in the prose's code spans; bare `npx agentbus` only in the warning against it.
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
    const spans = [...doc.matchAll(/`(npx\b[^`]*)`/g)].map((m) => m[1] ?? '');
    expect(spans.filter((c) => c === 'npx agentbus')).toHaveLength(1);
    for (const code of spans.filter((c) => c !== 'npx agentbus')) expect(code).toMatch(/^npx --package agentbus-mcp agentbus /);
    // The install line names this package, whose bin is the `agentbus` every snippet runs.
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('agentbus-mcp');
    expect(pkg.bin).toEqual({ agentbus: 'bin/agentbus.js' });
    expect(snippet(snippets, 'npm-install').text.trim()).toBe(`npm install -g ${pkg.name}`);
  });

  it('claude mcp add commands name the server agentbus and start a real server', async () => {
    for (const id of ['claude-mcp-add', 'claude-mcp-add-npx', 'claude-mcp-add-checkout']) {
      const lines = snippet(snippets, id).text.trim().split('\n');
      expect(lines).toHaveLength(1);
      const words = shellWords(lines[0] ?? '');
      const dash = words.indexOf('--');
      expect(words.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
      expect(words[dash - 1]).toBe('agentbus');
      const [command = '', ...args] = words.slice(dash + 1);
      expect(args.at(-1)).toBe('mcp');
      expect(await serverTools(command, args)).toContain('register');
    }
  });

  it('the Codex config parses, has timeouts that fit a cold start and the longest receive, and starts a real server', async () => {
    const config = parseTomlSubset(snippet(snippets, 'codex-config').text);
    const server = config.mcp_servers.agentbus as Json;
    expect(Object.keys(config.mcp_servers)).toEqual(['agentbus']);
    expect(server.startup_timeout_sec).toBeGreaterThan(10);
    expect(server.tool_timeout_sec).toBeGreaterThan(maxReceiveWaitSeconds());
    // Without it Codex may start a session without agentbus's tools (docs/install.md says what it costs).
    expect(server.required).toBe(true);
    expect(await serverTools(server.command, server.args)).toContain('register');
  });

  it('the Gemini CLI settings start a real server, allow the longest receive, and the hook prints the JSON Gemini gives the model', async () => {
    const settings = JSON.parse(snippet(snippets, 'gemini-settings').text);
    expect(Object.keys(settings.mcpServers)).toEqual(['agentbus']);
    const server = settings.mcpServers.agentbus;
    expect(server.timeout).toBeGreaterThan(maxReceiveWaitSeconds() * 1000);
    expect(await serverTools(server.command, server.args)).toContain('register');

    const project = tempDir();
    mkdirSync(join(project, '.git'));
    mkdirSync(join(project, '.local'));
    writeFileSync(join(project, '.local', 'agentbus.json'), snippet(snippets, 'identity-file').text);
    const entry = settings.hooks.SessionStart[0];
    // Gemini compares a lifecycle matcher with the source as an exact string: none means every source.
    expect(entry.matcher).toBeUndefined();
    expect(entry.hooks).toHaveLength(1);
    expect(entry.hooks[0].type).toBe('command');
    const out = runHook(entry.hooks[0].command, project);
    // Gemini parses stdout as JSON when the hook exits 0; plain text would reach only the user.
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(out)).toEqual({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: snippet(snippets, 'identity-line').text.trim() },
    });
  });

  it('the Cursor config parses and starts a real server', async () => {
    const config = JSON.parse(snippet(snippets, 'cursor-mcp').text);
    expect(Object.keys(config.mcpServers)).toEqual(['agentbus']);
    const server = config.mcpServers.agentbus;
    expect(await serverTools(server.command, server.args)).toContain('register');
  });

  it('the Claude Code and Codex hooks fire on the right sources and print the identity line', () => {
    const project = tempDir();
    mkdirSync(join(project, '.git'));
    mkdirSync(join(project, '.local'));
    writeFileSync(join(project, '.local', 'agentbus.json'), snippet(snippets, 'identity-file').text);
    const expected = snippet(snippets, 'identity-line').text.trim();
    expect(identityLine(project)).toBe(expected);

    const claude = JSON.parse(snippet(snippets, 'claude-settings').text);
    const codex = JSON.parse(snippet(snippets, 'codex-hooks').text);
    const claudeEntry = claude.hooks.SessionStart[0];
    const codexEntry = codex.hooks.SessionStart[0];
    expect(claudeEntry.matcher.split('|')).toEqual(expect.arrayContaining(['startup', 'resume', 'clear']));
    expect(codexEntry.matcher).toBe('startup|resume|clear');
    for (const entry of [claudeEntry, codexEntry]) {
      expect(entry.hooks).toHaveLength(1);
      expect(entry.hooks[0].type).toBe('command');
      expect(runHook(entry.hooks[0].command, join(project)).trim()).toBe(expected);
    }
    // The checkout form the doc gives for `agentbus` without npm link.
    expect(runHook(`node ${CHECKOUT_PLACEHOLDER}/bin/agentbus.js identity`, project).trim()).toBe(expected);
    expect(claudeEntry.hooks[0].command).toBe('agentbus identity');
  });

  it('the identity file is what agentbus identity accepts, and the gitignore line covers it', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.local'));
    const file = join(dir, '.local', 'agentbus.json');
    writeFileSync(file, snippet(snippets, 'identity-file').text);
    expect(readIdentity(file)).toBe('Sam');
    expect(snippet(snippets, 'gitignore').text.trim().split('\n')).toContain('.local/');
    expect(execFileSync('git', ['check-ignore', '--no-index', '-q', '.local/agentbus.json'], {
      cwd: (() => {
        execFileSync('git', ['init', '-q'], { cwd: dir });
        writeFileSync(join(dir, '.gitignore'), snippet(snippets, 'gitignore').text);
        return dir;
      })(),
      encoding: 'utf8',
    })).toBe('');
  });

  it('the AGENTS.md snippet gives the first calls: register with the as field, subscribe, receive with ack', () => {
    const text = snippet(snippets, 'agents-md').text;
    const order = ['`register`', '`as`', '`subscribe`', '`receive`', '`ack`'].map((w) => text.indexOf(w));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).toMatch(/agentbus identity/);
  });

  it('the inbox hooks of every harness use events inbox --hook answers, and print nothing with nothing unread', () => {
    const home = tempDir();
    for (const id of INBOX_HOOK_SNIPPETS) {
      const config = JSON.parse(snippet(snippets, id).text) as Json;
      const hooks = hookCommands(config);
      expect(hooks.length, id).toBeGreaterThan(0);
      for (const { event, entry } of hooks) {
        expect(hookKind(event), `${id}: ${event}`).toBeDefined();
        // The installed command, like the server entries and the SessionStart hooks.
        expect(entry.command).toBe('agentbus inbox --hook');
        // No agentbus server in this home: the hook must stay silent, whatever the event.
        expect(runHook(entry.command, home, JSON.stringify({ hook_event_name: event, session_id: 'doc' })), `${id}: ${event}`).toBe('');
      }
    }
    // The checkout form the doc gives for `agentbus` without npm link.
    expect(runHook(`node ${CHECKOUT_PLACEHOLDER}/bin/agentbus.js inbox --hook`, home, JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 'doc' }))).toBe('');
    // Each harness's hooks cover a moment after tool calls (or, for Cursor, only the stop) and the stop.
    const events = (id: string): string[] => Object.keys(JSON.parse(snippet(snippets, id).text).hooks);
    expect(events('claude-inbox-hooks')).toEqual(['UserPromptSubmit', 'PostToolUse', 'Stop']);
    expect(events('codex-inbox-hooks')).toEqual(['UserPromptSubmit', 'PostToolUse', 'Stop']);
    expect(events('gemini-inbox-settings')).toEqual(['BeforeAgent', 'AfterTool', 'AfterAgent']);
    const cursor = JSON.parse(snippet(snippets, 'cursor-inbox-hooks').text) as Json;
    expect(cursor.version).toBe(1);
    expect(events('cursor-inbox-hooks')).toEqual(['stop']);
    expect(cursor.hooks.stop[0].loop_limit).toBeGreaterThan(0);
  });

  it('the listening Stop hook waits less than its hook timeout, and the channel flag names the documented server', () => {
    const listener = JSON.parse(snippet(snippets, 'claude-listener-hooks').text) as Json;
    const [first] = hookCommands(listener);
    if (first === undefined) throw new Error('the claude-listener-hooks snippet has no hook command');
    const { entry } = first;
    expect(entry.command).toMatch(/^agentbus inbox --hook --wait \d+$/);
    const wait = Number(/--wait (\d+)/.exec(entry.command)?.[1]);
    expect(wait).toBeGreaterThan(0);
    expect(entry.timeout).toBeGreaterThan(wait);
    const words = shellWords(snippet(snippets, 'claude-channels').text.trim());
    expect(words).toEqual(['claude', '--dangerously-load-development-channels', 'server:agentbus']);
    const added = shellWords(snippet(snippets, 'claude-mcp-add').text.trim());
    expect(added[added.indexOf('--') - 1]).toBe('agentbus');
  });
});
