/**
 * End to end with a client this project did not write: the MCP Inspector's
 * CLI mode drives `agentbus mcp`. Each inspector run is one process making
 * one call, so the server it spawns is new every time (a new owner token):
 * the first tests show what that means for names, and the round trip runs
 * through a transparent stdio relay to one long-lived server.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { formatProcessIdentity } from '../../src/db/processes/process-identity.js';
import { fixturePath } from '../support/child-process.js';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { foreignProcess } from '../support/process-identities.js';
import { openTestDatabase, tempDir, testDriverEnv } from '../support/test-driver.js';

type Json = Record<string, any>;

const require = createRequire(import.meta.url);
const INSPECTOR_DIR = dirname(require.resolve('@modelcontextprotocol/inspector/package.json'));
const INSPECTOR = join(INSPECTOR_DIR, JSON.parse(readFileSync(join(INSPECTOR_DIR, 'package.json'), 'utf8')).bin['mcp-inspector']);
const RELAY = fixturePath('stdio-relay.mjs');

/** The inspector needs Node >= 22.19; under an older test Node (the wasm run on Node 20) it runs on the pinned dev Node. */
function inspectorNode(): string {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  const pinned = fileURLToPath(new URL('../../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) throw new Error(`the MCP Inspector needs Node >= 22.19 and ${pinned} is missing: run npm ci`);
  return pinned;
}

interface InspectorRun {
  readonly code: number | null;
  readonly result: Json | undefined;
  readonly stderr: string;
}

function serverEnvFlags(dataDir: string): string[] {
  const env = { AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testDriverEnv(dataDir) };
  return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
}

/** One inspector CLI run against `server` (a command line), with `method` flags. */
async function inspector(home: string, server: readonly string[], method: readonly string[], envFlags: readonly string[] = []): Promise<InspectorRun> {
  const child = spawn(inspectorNode(), [INSPECTOR, '--cli', ...envFlags, ...server, ...method, '--format', 'json', '-q'], {
    env: { PATH: process.env.PATH ?? '', HOME: home },
    cwd: home,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let result: Json | undefined;
  try {
    result = JSON.parse(stdout).result;
  } catch {
    result = undefined;
  }
  return { code, result, stderr };
}

function callFlags(tool: string, args: Json): string[] {
  return ['--method', 'tools/call', '--tool-name', tool, '--tool-args-json', JSON.stringify(args)];
}

function prepare(): { dataDir: string; home: string } {
  const dataDir = tempDir();
  writeFileSync(join(dataDir, 'config.json'), '{}');
  return { dataDir, home: tempDir() };
}

const direct = [process.execPath, AGENTBUS_BIN, 'mcp'];

/** One long-lived `agentbus mcp` reachable through a unix socket, one client connection at a time. */
interface SharedServer {
  readonly socketPath: string;
  readonly child: ChildProcess;
  readonly listener: Server;
}

const shared: SharedServer[] = [];
afterEach(async () => {
  for (const s of shared.splice(0)) {
    s.listener.close();
    s.child.stdin?.end();
    if (s.child.exitCode === null) await new Promise((r) => s.child.once('exit', r));
  }
});

async function startSharedServer(dataDir: string): Promise<SharedServer> {
  const child = spawn(process.execPath, [AGENTBUS_BIN, 'mcp'], {
    env: { PATH: process.env.PATH ?? '', HOME: dataDir, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testDriverEnv(dataDir) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let current: Socket | undefined;
  child.stdout?.on('data', (d: Buffer) => current?.write(d));
  const listener = createServer((socket) => {
    current = socket;
    socket.on('data', (d) => child.stdin?.write(d));
    socket.on('error', () => undefined);
  });
  const socketPath = join(tempDir(), 'relay.sock');
  await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
  const server = { socketPath, child, listener };
  shared.push(server);
  return server;
}

describe('agentbus mcp driven by the MCP Inspector CLI', () => {
  it('lists every tool, each with an input and output schema', async () => {
    const { dataDir, home } = prepare();
    const run = await inspector(home, direct, ['--method', 'tools/list'], serverEnvFlags(dataDir));
    expect(run.code, run.stderr).toBe(0);
    const names = (run.result?.tools as Json[]).map((t) => t.name);
    for (const name of ['register', 'create_channel', 'list_channels', 'subscribe', 'unsubscribe', 'send', 'receive', 'history', 'get_memory', 'edit_memory', 'delete_memory', 'discover']) {
      expect(names).toContain(name);
    }
    for (const tool of run.result?.tools as Json[]) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema.type).toBe('object');
    }
  });

  it('registers in one server process; the next process does not own that name; names are released on clean exit and kept for a crashed holder in another pid namespace until its heartbeat stops', async () => {
    const { dataDir, home } = prepare();
    const env = serverEnvFlags(dataDir);
    const first = await inspector(home, direct, callFlags('register', { name: 'Alice' }), env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.result?.structuredContent.display_name).toBe('Alice');

    // A new process holds a new owner token: acting as Alice is an isError result (inspector exit 5).
    const send = await inspector(home, direct, callFlags('send', { as: 'Alice', channel: 'general', content: 'hi' }), env);
    expect(send.code).toBe(5);
    expect(send.result?.isError).toBe(true);
    expect(send.result?.structuredContent.error.code).toBe('not_registered');

    // A server that exits cleanly gives its names up, so the next process gets the name itself ...
    const second = await inspector(home, direct, callFlags('register', { name: 'Alice' }), env);
    expect(second.code).toBe(0);
    expect(second.result?.structuredContent.display_name).toBe('Alice');

    // ... while a holder that died without cleaning up where agentbus cannot see it (another pid
    // namespace; one it can see frees its name at once, test/mcp/crash-resume.test.ts) keeps it
    // until its heartbeat has not moved for 30 s of the monotonic clock.
    const { db } = await openTestDatabase(dataDir);
    try {
      expect(db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 0 });
      db.run(
        "INSERT INTO sessions (sender, context, owner, heartbeat, registered_at, owner_process, clock_domain, heartbeat_mono) VALUES ('Alice', 'x', 'crashed-process', ?, ?, ?, ?, ?)",
        [Date.now(), Date.now(), formatProcessIdentity(foreignProcess()), systemClock.monotonicDomain ?? null, systemClock.monotonic()],
      );
    } finally {
      db.close();
    }
    const third = await inspector(home, direct, callFlags('register', { name: 'Alice' }), env);
    expect(third.result?.structuredContent.display_name).toBe('Alice2');
    const aged = await openTestDatabase(dataDir);
    try {
      aged.db.run('UPDATE sessions SET heartbeat_mono = heartbeat_mono - 30000');
    } finally {
      aged.db.close();
    }
    const fourth = await inspector(home, direct, callFlags('register', { name: 'Alice' }), env);
    expect(fourth.code).toBe(0);
    expect(fourth.result?.structuredContent.display_name).toBe('Alice');
  });

  it('round-trips register, create_channel, subscribe, send and receive with ack through one server', async () => {
    const { dataDir, home } = prepare();
    const server = await startSharedServer(dataDir);
    const relay = [process.execPath, RELAY, server.socketPath];
    const call = async (tool: string, args: Json): Promise<Json> => {
      const run = await inspector(home, relay, callFlags(tool, args));
      expect(run.code, `${tool}: ${run.stderr}`).toBe(0);
      expect(run.result?.isError ?? false).toBe(false);
      return run.result?.structuredContent as Json;
    };

    expect((await call('register', { name: 'Alice' })).display_name).toBe('Alice');
    expect((await call('register', { name: 'Bob' })).display_name).toBe('Bob');
    await call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    await call('subscribe', { as: 'Bob', channel: 'work', from: 'oldest' });
    const sent = await call('send', { as: 'Alice', channel: 'work', content: 'hello from the inspector' });
    expect(sent.seq).toEqual(expect.any(Number));

    const got = await call('receive', { as: 'Bob', channels: ['work'], wait_seconds: 0 });
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]).toMatchObject({ seq: sent.seq, channel: 'work', sender: 'Alice', content: 'hello from the inspector' });
    const acked = await call('receive', { as: 'Bob', ack: got.batch_token, wait_seconds: 0 });
    expect(acked.messages).toEqual([]);
    expect(acked.notices).toEqual([]);

    // The same rows, seen by the admin CLI.
    const status = JSON.parse(execFileSync(process.execPath, [AGENTBUS_BIN, 'status', '--json'], {
      env: { PATH: process.env.PATH ?? '', HOME: dataDir, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testDriverEnv(dataDir) },
      encoding: 'utf8',
    }));
    expect(status.sessions.map((s: Json) => s.display_name)).toEqual(['Alice', 'Bob']);
  });
});
