/**
 * The scenario every harness test runs, with the real harness binary and a
 * model stand-in on 127.0.0.1 (support/model-server.ts):
 *
 * 1. Agent B (display name Kim) registers, subscribes to `general`, and is
 *    busy with unrelated tool calls (list_channels). Every hook run is
 *    recorded; before anything is sent, the inbox hook prints nothing.
 * 2. Before B's second busy call, another agent (Ann, an `agentbus mcp`
 *    driven by this test) sends a message. The PostToolUse/AfterTool hook
 *    after that call must put a nudge into B's next model request.
 * 3. B's model ends its turn; the Stop/AfterAgent hook blocks it with the
 *    reason, which must reach the model's next request.
 * 4. B receives and acknowledges; the next stop is let through, and the
 *    harness exits.
 *
 * The script never throws inside the server: it records what it saw and
 * what went wrong, and ends the session early on a surprise, so a failing
 * run fails its assertions quickly instead of hanging.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedAgentbus } from '../../support/installed-agentbus.js';
import { AGENTBUS_BIN, startMcp, type McpProcess } from '../../support/mcp-process.js';
import { tempDir, testDriverName } from '../../support/test-driver.js';
import { runHarness } from './harness-launch.js';
import { startModelServer, type RecordedRequest, type Reply, type Turn } from './model-server.js';

/** The opening of every nudge and stop reason `agentbus inbox` writes (src/harness/inbox-text.ts). */
export const NUDGE = 'Agentbus: other agents wrote to you';
export const SENT = 'please review PR 7';
const RECORDER = fileURLToPath(new URL('../fixtures/recording-hook.mjs', import.meta.url));

export interface LaunchContext {
  /** The test's root folder (temporary). */
  readonly root: string;
  /** HOME for the harness: a fresh folder, so no user configuration leaks in. */
  readonly home: string;
  /** The harness's working directory. */
  readonly work: string;
  /** The model stand-in, `http://127.0.0.1:<port>`. */
  readonly modelUrl: string;
  /** AGENTBUS_* for the server entry and the hooks: this test's data directory and driver. */
  readonly agentbusEnv: Readonly<Record<string, string>>;
  /** The node that runs agentbus (this test's, so the driver under test loads). */
  readonly node: string;
  /** bin/agentbus.js of this checkout. */
  readonly bin: string;
  /** Wraps a documented hook command so its runs are recorded (it still runs exactly as written). */
  wrapHook(command: string): string;
  /** PATH for the harness: the installed `agentbus` the snippets name, then this node, as a user's PATH decides which node they run. */
  readonly path: string;
}

export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface HookRun {
  readonly event: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
}

export interface ScenarioResult {
  /** The agent-loop requests, in order. */
  readonly turns: readonly RecordedRequest[];
  /** Occurrences of NUDGE in each turn's request (the whole conversation so far). */
  readonly nudges: readonly number[];
  readonly hookRuns: readonly HookRun[];
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** What went wrong inside the script, if anything. */
  readonly surprises: readonly string[];
  /** The seq of Ann's message. */
  readonly sentSeq: number;
  /** The batch token B acknowledged. */
  readonly token: string | undefined;
  /** The messages B's receive returned, as the model saw them (request text). */
  readonly receivedText: string;
  /** agentbus.log of the data directory (log_level debug). */
  readonly log: string;
  readonly root: string;
}

const occurrences = (text: string, needle: string): number => text.split(needle).length - 1;

/** The harness's name for agentbus tool `name`. */
export function toolNamed(turn: Turn, name: string): string {
  const found = turn.tools.find((t) => t.includes('agentbus') && (t.endsWith(`__${name}`) || t.endsWith(`_${name}`)));
  if (found === undefined) throw new Error(`no agentbus ${name} tool among ${turn.tools.join(', ')}`);
  return found;
}

/** What a scripted run gives its script: Ann's server (driven by the test) and where to note what went wrong. */
export interface ScriptTools {
  /** Ann, registered, in an `agentbus mcp` of this test. */
  readonly ann: McpProcess;
  /** Surprises noted by the script; the run's assertions expect none. */
  readonly surprises: string[];
}

/** What every scripted run records. */
export interface ScriptedRun {
  /** The agent-loop requests, in order. */
  readonly turns: readonly RecordedRequest[];
  readonly hookRuns: readonly HookRun[];
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly surprises: readonly string[];
  /** agentbus.log of the data directory (log_level debug). */
  readonly log: string;
  readonly root: string;
}

/**
 * A script's turns as the model server's handler: a turn the script has no
 * reply for (undefined: the harness went on past the scripted stop) or one
 * whose step threw is a surprise, answered with a plain stop.
 */
function scripted(script: (turn: Turn) => Promise<Reply | undefined>, surprises: string[]): (turn: Turn) => Promise<Reply> {
  return async (turn) => {
    try {
      const reply = await script(turn);
      if (reply !== undefined) return reply;
      surprises.push(`turn ${turn.index}: the harness went on after the acknowledged stop`);
      return { text: 'Stopping.' };
    } catch (error) {
      surprises.push(`turn ${turn.index}: ${(error as Error).message}`);
      return { text: 'Stopping after a surprise.' };
    }
  };
}

/** The batch token of the receive result this turn carries, and the text around it; a missing token is a surprise. */
export function receivedBatch(turn: Turn, surprises: string[]): { token: string | undefined; receivedText: string } {
  const found = lastBatchToken(turn.text);
  if (found === undefined) surprises.push(`turn ${turn.index}: no batch_token in the receive result`);
  return { token: found?.token, receivedText: found === undefined ? '' : turn.text.slice(Math.max(0, found.index - 2000), found.index + 200) };
}

/**
 * Runs the harness `launch` builds against the model stand-in playing
 * `script` (made once Ann is registered); resolves when the harness has exited.
 */
export async function runScripted(
  launch: (context: LaunchContext) => Launch,
  makeScript: (tools: ScriptTools) => (turn: Turn) => Promise<Reply | undefined>,
  timeoutMs = 240_000,
): Promise<ScriptedRun> {
  const root = tempDir('agentbus-harness-');
  const data = join(root, 'data');
  const home = join(root, 'home');
  const work = join(root, 'work');
  for (const dir of [data, home, work]) mkdirSync(dir, { recursive: true });
  const hookLog = join(root, 'hooks.jsonl');
  writeFileSync(hookLog, '');
  const config = { log_level: 'debug', send_messages_per_second: 1000 };
  const ann = await startMcp(data, { config });
  await ann.call('register', { name: 'Ann' });
  const surprises: string[] = [];
  const model = await startModelServer(scripted(makeScript({ ann, surprises }), surprises));
  const agentbusEnv = { AGENTBUS_DATA_DIR: data, AGENTBUS_CONFIG: join(data, 'config.json'), AGENTBUS_DRIVER: testDriverName() };
  const path = installedAgentbus().path();
  const context: LaunchContext = {
    root,
    home,
    work,
    modelUrl: model.url,
    agentbusEnv,
    node: process.execPath,
    bin: AGENTBUS_BIN,
    path,
    wrapHook: (command) => `"${process.execPath}" "${RECORDER}" "${hookLog}" '${command.replaceAll("'", `'\\''`)}'`,
  };
  const { exitCode, stdout, stderr } = await runHarness(launch(context), work, timeoutMs, surprises);
  await model.close();
  await ann.close();
  const hookRuns = readFileSync(hookLog, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as HookRun);
  let log = '';
  try {
    log = readFileSync(join(data, 'agentbus.log'), 'utf8');
  } catch {
    // No log written: the assertions on it say so.
  }
  return { turns: model.requests.filter((r) => r.turn !== undefined), hookRuns, exitCode, stdout, stderr, surprises, log, root };
}

/** The last batch token in a request's text (descriptions mention the field, never a value). */
export function lastBatchToken(text: string): { token: string; index: number } | undefined {
  // A token is 22 base64url characters and may begin with '-': only quotes, backslashes (JSON inside JSON), colons and
  // spaces separate it from the field name, so a separator class like \W+ would swallow that '-'.
  const found = [...text.matchAll(/batch_token[\\"':\s]+([A-Za-z0-9_-]{22})(?![A-Za-z0-9_-])/g)].at(-1);
  return found?.[1] === undefined ? undefined : { token: found[1], index: found.index };
}

/** Runs the scenario with the harness `launch` builds; resolves when the harness has exited. */
export async function runBusyAgent(launch: (context: LaunchContext) => Launch, timeoutMs = 240_000): Promise<ScenarioResult> {
  const nudges: number[] = [];
  let sentSeq = -1;
  let token: string | undefined;
  let receivedText = '';
  const run = await runScripted(
    launch,
    ({ ann, surprises }) =>
      async (turn: Turn): Promise<Reply | undefined> => {
        nudges[turn.index] = occurrences(turn.text, NUDGE);
        switch (turn.index) {
          case 0:
            return { tool: { name: toolNamed(turn, 'register'), args: { name: 'Kim' } } };
          case 1:
            return { tool: { name: toolNamed(turn, 'subscribe'), args: { as: 'Kim', channel: 'general' } } };
          case 2:
            return { tool: { name: toolNamed(turn, 'list_channels'), args: { as: 'Kim' } } };
          case 3: {
            const sent = (await ann.call('send', { as: 'Ann', channel: 'general', content: SENT })) as { seq?: number };
            sentSeq = sent.seq ?? -1;
            return { tool: { name: toolNamed(turn, 'list_channels'), args: { as: 'Kim' } } };
          }
          case 4:
            return { text: 'Finished my task.' };
          case 5:
            return { tool: { name: toolNamed(turn, 'receive'), args: { as: 'Kim' } } };
          case 6: {
            ({ token, receivedText } = receivedBatch(turn, surprises));
            return { tool: { name: toolNamed(turn, 'receive'), args: { as: 'Kim', ...(token === undefined ? {} : { ack: token }) } } };
          }
          case 7:
            return { text: 'All done.' };
          default:
            return undefined;
        }
      },
    timeoutMs,
  );
  return { ...run, nudges, sentSeq, token, receivedText };
}

/** The hook events a harness uses for "after a tool call" and "the agent wants to stop". */
export interface ScenarioEvents {
  readonly tool: string;
  readonly stop: string;
}

/**
 * The scenario's claims, checked with vitest's expect (passed in so this
 * module stays free of test-runner imports).
 */
export function checkBusyAgent(expect: typeof import('vitest').expect, r: ScenarioResult, events: ScenarioEvents): void {
  const context = `harness stderr: ${r.stderr.slice(-3000)}\nsurprises: ${r.surprises.join('; ')}\nfolder: ${r.root}`;
  expect(r.surprises, context).toEqual([]);
  expect(r.exitCode, context).toBe(0);
  expect(r.turns, context).toHaveLength(8);

  // Before Ann sent anything, no request carried a word from agentbus, and the tool hook ran and printed nothing.
  expect(r.nudges.slice(0, 4)).toEqual([0, 0, 0, 0]);
  const toolRuns = r.hookRuns.filter((h) => h.event === events.tool);
  expect(toolRuns.length).toBeGreaterThanOrEqual(4);
  expect(toolRuns.slice(0, 3).map((h) => h.stdout)).toEqual(['', '', '']);

  // B, busy, got the nudge after its next tool call: the very next model request carries it.
  expect(r.nudges[4]).toBe(1);
  const turn4 = JSON.stringify(r.turns[4]!.body);
  expect(turn4).toContain(SENT);
  expect(turn4).toMatch(/newest from Ann \(seq \d+\)/);

  // Ending the turn was blocked, and the reason reached the model.
  expect(r.nudges[5]).toBeGreaterThan(r.nudges[4]!);
  const stops = r.hookRuns.filter((h) => h.event === events.stop);
  expect(stops.length).toBeGreaterThanOrEqual(2);
  expect(stops[0]!.stdout).toContain(NUDGE);
  // Received and acknowledged: the last stop went through with nothing printed.
  expect(r.receivedText).toContain(SENT);
  expect(r.token).toBeDefined();
  expect(stops.at(-1)!.stdout).toBe('');
  expect(r.hookRuns.every((h) => h.code === 0)).toBe(true);

  // The server pushed its channel event to this harness too; it ignored it and worked on.
  expect(r.log).toMatch(/channel event sent[^\n]*"as":"Kim"/);
}
