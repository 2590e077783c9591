/**
 * A harness session whose agentbus database cannot be opened (its header
 * overwritten with garbage where a bus was): the model stand-in calls
 * register once, and the request after it shows what the model got back. It
 * must be the tool's error result (the code and the way out), not a
 * transport error, and the server must still be connected.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { installedAgentbus } from '../../support/installed-agentbus.js';
import { AGENTBUS_BIN } from '../../support/mcp-process.js';
import { tempDir, testDriverName } from '../../support/test-driver.js';
import { usedBus } from '../../support/used-bus.js';
import type { Launch, LaunchContext } from './busy-agent.js';
import { runHarness } from './harness-launch.js';
import { startModelServer, type Turn } from './model-server.js';

export interface BrokenDatabaseResult {
  /** What the model saw in the request after its register call (the whole request text). */
  readonly afterCall: string;
  /** The tool names the first request offered. */
  readonly tools: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly surprises: readonly string[];
}

/** A data directory a server used, then its database's header overwritten. */
async function brokenDataDir(data: string): Promise<void> {
  await usedBus(data);
  const fd = openSync(join(data, 'agentbus.db'), 'r+');
  writeSync(fd, Buffer.alloc(100, 0x5a), 0, 100, 0);
  closeSync(fd);
}

export async function runBrokenDatabase(launch: (context: LaunchContext) => Launch, timeoutMs = 180_000): Promise<BrokenDatabaseResult> {
  const root = tempDir('agentbus-harness-');
  const data = join(root, 'data');
  const home = join(root, 'home');
  const work = join(root, 'work');
  for (const dir of [data, home, work]) mkdirSync(dir, { recursive: true });
  await brokenDataDir(data);
  const surprises: string[] = [];
  let afterCall = '';
  let tools: readonly string[] = [];
  const model = await startModelServer((turn: Turn) => {
    if (turn.index === 0) {
      tools = turn.tools;
      const register = turn.tools.find((t) => t.includes('agentbus') && t.endsWith('register'));
      if (register === undefined) {
        surprises.push(`no agentbus register tool among ${turn.tools.join(', ')}`);
        return { text: 'Stopping.' };
      }
      return { tool: { name: register, args: { name: 'Kim' } } };
    }
    if (turn.index === 1) afterCall = turn.text;
    return { text: 'Told the user.' };
  });
  const context: LaunchContext = {
    root,
    home,
    work,
    modelUrl: model.url,
    agentbusEnv: { AGENTBUS_DATA_DIR: data, AGENTBUS_CONFIG: join(data, 'config.json'), AGENTBUS_DRIVER: testDriverName() },
    node: process.execPath,
    bin: AGENTBUS_BIN,
    path: installedAgentbus().path(),
    wrapHook: (command) => command,
  };
  const { exitCode, stderr } = await runHarness(launch(context), work, timeoutMs, surprises);
  await model.close();
  return { afterCall, tools, exitCode, stderr, surprises };
}
