/**
 * What a command loads decides how fast it starts, and hooks start after every
 * tool call. The bundles and bin/agentbus.js are CommonJS, so a process that
 * stays in them never starts Node's ESM loader (about 15% of a hook command's
 * run on Node 20; docs/performance.md). An ES module or an import() slipped
 * into the build would start it again without failing anything else: these
 * runs catch that, for the hook commands and for a server's whole life
 * (including the wasm runtime, which the wasm project loads).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RegisterOutput } from '../../src/bus/identity.js';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';
import { prepareCliDir, runCli } from './cli-process.js';

const PROBE = fileURLToPath(new URL('../fixtures/esm-loader-probe.cjs', import.meta.url));

function probeEnv(out: string): Record<string, string> {
  return { NODE_OPTIONS: `--require ${PROBE}`, AGENTBUS_TEST_PROBE_OUT: out };
}

function probed(out: string): { command: string; esmLoader: boolean }[] {
  if (!existsSync(out)) return [];
  return readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { command: string; esmLoader: boolean });
}

describe('start-up without the ESM loader', () => {
  it('the hook commands, help and status run without starting it', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const out = join(dir, 'probe.jsonl');
    const env = probeEnv(out);
    const hookInput = JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 'probe' });
    for (const [args, input] of [[['identity']], [['inbox', '--hook'], hookInput], [['--help']], [['status']]] as [string[], string?][]) {
      const run = await runCli(dir, args, { env, input });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    expect(probed(out)).toEqual([
      { command: 'identity', esmLoader: false },
      { command: 'inbox --hook', esmLoader: false },
      { command: '--help', esmLoader: false },
      { command: 'status', esmLoader: false },
    ]);
  });

  it('a server that opens the database, sends and receives runs without starting it', async () => {
    const dir = tempDir();
    const out = join(dir, 'probe.jsonl');
    const server = await startMcp(dir, { env: probeEnv(out) });
    const probe = toolAnswer(RegisterOutput, await server.call('register', { name: 'Probe' }), 'register');
    await server.call('create_channel', { as: probe.display_name, name: 'work', kind: 'ordinary' });
    await server.call('subscribe', { as: probe.display_name, channel: 'work' });
    const peer = toolAnswer(RegisterOutput, await server.call('register', { name: 'Peer' }), 'register');
    const sent = toolAnswer(SendOutput, await server.call('send', { as: peer.display_name, channel: 'work', content: 'hello' }), 'send');
    const got = toolAnswer(ReceiveOutput, await server.call('receive', { as: probe.display_name }), 'receive');
    expect(got.messages.map((m) => [m.seq, m.content])).toEqual([[sent.seq, 'hello']]);
    await server.close();
    for (let i = 0; i < 200 && probed(out).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(probed(out)).toEqual([{ command: 'mcp', esmLoader: false }]);
  });
});
