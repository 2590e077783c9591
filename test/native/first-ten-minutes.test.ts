/**
 * The first ten minutes of a new user, replayed end to end: a fresh HOME, the
 * `agentbus` command as installed (test/support/installed-agentbus.ts), the
 * README's first `agentbus mcp` under Node 22 (which makes a posix database),
 * then two harness sessions on different Node versions, each an agent that
 * knows only what agentbus tells it: the SessionStart hook line, the server's
 * instructions and the tool schemas with their descriptions. They register,
 * subscribe, send, receive and acknowledge; one restarts cleanly and resumes.
 *
 * The file spawns both Node versions itself, so it runs once, in the native
 * project.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { installedAgentbus, type InstalledAgentbus } from '../support/installed-agentbus.js';
import { node22, nodeWasmOnly, type NodeRuntime } from '../support/node-versions.js';
import { tempDir } from '../support/test-driver.js';

type Json = Record<string, any>;

/** What a user's machine looks like: a home directory, the installed command, a repository per agent. */
interface Machine {
  readonly home: string;
  readonly agentbus: InstalledAgentbus;
}

function env(machine: Machine, runtime: NodeRuntime): Record<string, string> {
  // Only what a harness passes on: no AGENTBUS_* settings, so every default applies.
  return { ...getDefaultEnvironment(), HOME: machine.home, PATH: machine.agentbus.path(runtime.bin), ...runtime.env };
}

/** Runs an admin command as the user would in a terminal of that Node. */
function cli(machine: Machine, runtime: NodeRuntime, args: readonly string[], cwd = machine.home): string {
  return execFileSync('agentbus', args, { cwd, env: env(machine, runtime), encoding: 'utf8' });
}

/** The same, for a command that may fail: its exit code and both streams. */
function cliRun(machine: Machine, runtime: NodeRuntime, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync('agentbus', args, { cwd: machine.home, env: env(machine, runtime), encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * An agent that follows only what agentbus says. Every call it makes is
 * checked against the tool's published schema: each argument a described
 * property, every required one present.
 */
class Agent {
  private client: Client | undefined;
  private tools = new Map<string, Json>();
  instructions = '';
  displayName = '';
  private lastToken: string | null = null;
  stderr = '';

  constructor(
    readonly machine: Machine,
    readonly repo: string,
  ) {}

  /** The SessionStart hook: the name to register under. */
  hookLine(runtime: NodeRuntime): string {
    return cli(this.machine, runtime, ['identity'], this.repo).trim();
  }

  /** The harness spawns `agentbus mcp` (from the PATH, with this Node) and lists the tools. */
  async connect(runtime: NodeRuntime): Promise<void> {
    const transport = new StdioClientTransport({ command: 'agentbus', args: ['mcp'], env: env(this.machine, runtime), cwd: this.repo, stderr: 'pipe' });
    transport.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString('utf8')));
    const client = new Client({ name: 'first-ten-minutes', version: '0' });
    await client.connect(transport);
    this.client = client;
    this.instructions = client.getInstructions() ?? '';
    this.tools = new Map((await client.listTools()).tools.map((t) => [t.name, t.inputSchema as Json]));
  }

  async call(name: string, args: Json): Promise<Json> {
    const schema = this.tools.get(name);
    expect(schema, `the model sees no tool ${name}`).toBeDefined();
    for (const key of Object.keys(args)) {
      expect(schema?.properties?.[key]?.description, `${name}.${key} has no description to go by`).toEqual(expect.any(String));
    }
    for (const key of (schema?.required ?? []) as string[]) expect(args, `${name} needs ${key}`).toHaveProperty(key);
    const result = await this.client!.callTool({ name, arguments: args });
    const content = (result.structuredContent ?? {}) as Json;
    expect(result.isError ?? false, `${name} failed: ${JSON.stringify(content)}`).toBe(false);
    return content;
  }

  /** The first calls, in the order the instructions give them, with the name from the hook line. */
  async start(runtime: NodeRuntime): Promise<Json> {
    const name = /call register with name ([^\s,(]+)/.exec(this.hookLine(runtime))?.[1];
    expect(name).toBeDefined();
    await this.connect(runtime);
    const order = ['register', 'subscribe', 'send', 'receive', 'ack'].map((w) => this.instructions.indexOf(w));
    expect([...order].sort((a, b) => a - b), this.instructions).toEqual(order);
    const registered = await this.call('register', { name });
    this.displayName = registered.display_name as string;
    // "subscribe to "general" ... and "memory" ..., unless register listed them under subscriptions"
    const sentence = this.instructions.slice(this.instructions.indexOf('subscribe'), this.instructions.indexOf('send'));
    const wanted = [...sentence.matchAll(/"([A-Za-z0-9._-]+)"/g)].map((m) => m[1]!);
    expect(wanted).toEqual(['general', 'memory']);
    const have = new Set((registered.subscriptions as Json[]).map((s) => s.channel as string));
    for (const channel of wanted.filter((c) => !have.has(c))) await this.call('subscribe', { as: this.displayName, channel });
    return registered;
  }

  async send(channel: string, content: string): Promise<number> {
    return (await this.call('send', { as: this.displayName, channel, content })).seq as number;
  }

  /** receive, passing the previous batch_token back as ack, as the instructions say (null included). */
  async receive(waitSeconds = 0): Promise<Json> {
    const args: Json = { as: this.displayName, ack: this.lastToken };
    if (waitSeconds > 0) args.wait_seconds = waitSeconds;
    const got = await this.call('receive', args);
    this.lastToken = got.batch_token as string | null;
    return got;
  }

  /** A clean exit, as when the harness session ends: stdin closes, the server releases its names. */
  async stop(): Promise<void> {
    await this.client?.close();
    this.client = undefined;
    this.lastToken = null;
  }
}

const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

function repoWithName(machine: Machine, dirName: string, identity: string | undefined): string {
  const repo = join(machine.home, 'src', dirName);
  mkdirSync(join(repo, '.git'), { recursive: true });
  if (identity !== undefined) {
    mkdirSync(join(repo, '.local'));
    writeFileSync(join(repo, '.local', 'agentbus.json'), JSON.stringify({ identity }));
  }
  return repo;
}

const contents = (r: Json) => (r.messages as Json[]).map((m) => m.content as string);

describe('the first ten minutes', () => {
  const n22 = node22();
  const wasmOnly = nodeWasmOnly();

  // A dozen processes of two Node versions, one after another: minutes on a loaded 2-core machine.
  it(`Node 22 makes the database, agents on ${wasmOnly.label} and Node 22 talk following only agentbus's own words, restart and resume`, { timeout: 240_000 }, async () => {
    const machine: Machine = { home: tempDir('agentbus-home-'), agentbus: installedAgentbus() };

    // Before anything ran: status says which driver a new database would get, and why.
    const fresh = JSON.parse(cli(machine, n22, ['status', '--json']));
    expect(fresh.database.exists).toBe(false);
    expect(fresh.new_database).toMatchObject({ driver: 'native', lock_protocol: 'posix', why: expect.stringMatching(/^auto: /) });
    expect(JSON.parse(cli(machine, wasmOnly, ['status', '--json'])).new_database).toMatchObject({ driver: 'wasm', lock_protocol: 'portable' });

    // The README's first step, run by hand under Node 22 and stopped: a posix database now exists.
    const tryout = new Agent(machine, machine.home);
    agents.push(tryout);
    await tryout.connect(n22);
    await tryout.stop();
    expect(JSON.parse(cli(machine, n22, ['status', '--json'])).database).toMatchObject({ exists: true, lock_protocol: 'posix' });

    // Sam's harness runs the machine's older Node: its server converts the unheld file and starts.
    const sam = new Agent(machine, repoWithName(machine, 'web', 'Sam'));
    agents.push(sam);
    expect(sam.hookLine(wasmOnly)).toMatch(/^Agentbus: call register with name Sam, then subscribe to general/);
    expect(await sam.start(wasmOnly)).toMatchObject({ display_name: 'Sam', resumed: false, subscriptions: [] });
    // Kim's harness runs Node 22 and has no .local/agentbus.json: the hook suggests the repository's name.
    const kim = new Agent(machine, repoWithName(machine, 'api', undefined));
    agents.push(kim);
    expect(kim.hookLine(n22)).toMatch(/call register with name api \(no \.local\/agentbus\.json found/);
    await kim.start(n22);
    expect(kim.displayName).toBe('api');
    const status = JSON.parse(cli(machine, n22, ['status', '--json']));
    expect(status.database).toMatchObject({ driver: 'wasm', lock_protocol: 'portable' });
    expect(status.sessions.map((s: Json) => s.display_name).sort()).toEqual(['Sam', 'api']);

    // Nothing yet: an empty receive, whose null token goes back as ack next time.
    expect(await kim.receive()).toMatchObject({ messages: [], batch_token: null });
    const waiting = kim.receive(30);
    await new Promise((r) => setTimeout(r, 500));
    await sam.send('general', 'hello from Sam');
    expect(contents(await waiting)).toEqual(['hello from Sam']);
    await sam.send('memory', 'the build needs Node 22 for the native driver');
    expect(contents(await kim.receive())).toEqual(['the build needs Node 22 for the native driver']); // the first batch acked
    await kim.send('general', 'hi Sam');
    expect(contents(await sam.receive(30))).toEqual(['hi Sam']);
    expect(await kim.receive()).toMatchObject({ messages: [], batch_token: null, notices: [] }); // acked, nothing redelivered

    // Kim's session ends cleanly; Sam posts meanwhile; Kim's next session resumes where it was.
    await kim.stop();
    await sam.send('general', 'while you were away');
    const resumed = await kim.start(n22);
    expect(resumed).toMatchObject({ display_name: 'api', resumed: true });
    expect((resumed.subscriptions as Json[]).map((s) => [s.channel, s.pending])).toEqual([
      ['general', 1],
      ['memory', 0],
    ]);
    expect(contents(await kim.receive())).toEqual(['while you were away']);
    expect(await kim.receive()).toMatchObject({ messages: [], batch_token: null, redelivered: false });

    await Promise.all([sam.stop(), kim.stop()]);
    const doctor = JSON.parse(cli(machine, n22, ['doctor', '--json']));
    expect(doctor.ok, JSON.stringify(doctor.checks)).toBe(true);
    expect(doctor.checks.find((c: Json) => c.name === 'integrity')?.status).toBe('ok');
    expect(sam.stderr + kim.stderr).toBe('');
  });

  it(`the command line a new user meets, on ${wasmOnly.label} and Node 22: one-line usage errors with exit 2, did-you-mean, the setting that was really given`, async () => {
    const machine: Machine = { home: tempDir('agentbus-home-'), agentbus: installedAgentbus() };
    for (const runtime of [wasmOnly, n22]) {
      const usage: Array<[string[], RegExp]> = [
        [[], /no command given/],
        [['-x'], /unknown option -x/],
        [['statsu'], /did you mean "status"\?/],
        [['status', 'extra-arg'], /unexpected argument "extra-arg"/],
        [['convert', '--to'], /--to needs a value: portable, posix or postgres/],
      ];
      for (const [args, message] of usage) {
        const r = cliRun(machine, runtime, args);
        expect([r.code, r.stdout], `agentbus ${args.join(' ')}`).toEqual([2, '']);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trimEnd().split('\n'), `agentbus ${args.join(' ')}`).toHaveLength(1);
      }
      // Every command takes --config, identity included (it reads no config, so any path does).
      expect(cliRun(machine, runtime, ['identity', '--config', join(machine.home, 'none.json')]).code).toBe(0);
    }

    const typo = join(machine.home, 'typo.json');
    writeFileSync(typo, JSON.stringify({ drivr: 'wasm' }));
    const mistyped = cliRun(machine, n22, ['status', '--config', typo]);
    expect(mistyped.code).toBe(1);
    expect(mistyped.stderr).toMatch(/drivr: is not a setting; did you mean "driver"\?/);

    // "driver": "native" in the file, on a Node that cannot run it: named as the file's setting, never as AGENTBUS_DRIVER.
    const native = join(machine.home, 'native.json');
    writeFileSync(native, JSON.stringify({ driver: 'native' }));
    const status = JSON.parse(cliRun(machine, wasmOnly, ['status', '--json', '--config', native]).stdout);
    expect(status.new_database).toMatchObject({ driver: null, why: expect.stringContaining(`"driver": "native" in ${native}`) });
    expect(status.new_database.why).not.toContain('AGENTBUS_DRIVER');
    const doctor = cliRun(machine, wasmOnly, ['doctor', '--json', '--config', native]);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout).checks.find((c: Json) => c.name === 'new_database')).toMatchObject({
      status: 'problem',
      message: expect.stringContaining(`remove "driver" from ${native}`),
    });
  });
});
