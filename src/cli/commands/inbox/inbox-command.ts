/**
 * `agentbus inbox`: what is unread for the agent of the harness session that
 * runs this command, for hooks. Read-only: it never opens the database (it
 * reads the inbox files the harness's `agentbus mcp` keeps current), never
 * creates a batch, moves a cursor or registers.
 *
 * Without --hook it prints plain lines (nothing when nothing is unread).
 * With --hook it reads the hook's JSON on stdin and answers in that event's
 * format (see src/harness/hook-events.ts): context for prompt and tool
 * events, a blocked stop while messages are unread or unacknowledged, and
 * with --wait SECONDS a stop hook that waits that long for a message before
 * it lets the agent stop.
 *
 * A hook must never break its harness: every failure (no session, a bad
 * config, unreadable files) prints nothing on stdout and exits 0, with the
 * reason on stderr and in the log. This module is loaded on its own by the
 * CLI and imports nothing heavy (no MCP SDK, no SQLite engine, no logger
 * unless there is something to log).
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import type { Readable } from 'node:stream';
import { loadConfig, type Config } from '../../../config.js';
import { harnessInbox } from '../../../harness/harness-names.js';
import { contextOutput, hookKind, parseHookInput, stopOutput, type HookInput } from '../../../harness/hook-events.js';
import { readHookState, writeHookState, type HookState } from '../../../harness/hook-state.js';
import { inboxDir } from '../../../harness/inbox-file.js';
import { inboxView, unackedSignature, unackedText, unreadSignature, unreadText, type InboxView } from '../../../harness/inbox-text.js';
import type { LogFields, Logger } from '../../../log.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus inbox` takes (its spec.ts). */
export type InboxOptions = OptionsOf<typeof spec.options>;

/** The longest --wait: an hour; a listening agent's stop hook runs again after each wake. */
export const MAX_WAIT_SECONDS = 3600;
/** How often a waiting stop hook looks without a hint. */
const WAIT_POLL_MS = 1000;
/** More stdin than this is drained, not kept (a tool response can be megabytes; the fields sit at the start). */
const STDIN_KEEP_BYTES = 8 * 1024 * 1024;
/** A harness closes stdin right after writing; this only guards against one that does not. */
const STDIN_TIMEOUT_MS = 3000;

interface HookMode {
  readonly hook: boolean;
  readonly waitMs: number;
}

function hookMode(options: InboxOptions): HookMode {
  const hook = options.hook;
  let waitMs = 0;
  if (options.wait !== undefined) {
    const seconds = /^\d+(\.\d+)?$/.test(options.wait) ? Number(options.wait) : Number.NaN;
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_WAIT_SECONDS) {
      throw new CliError('usage', `--wait must be a number of seconds between 1 and ${MAX_WAIT_SECONDS}; got ${options.wait}`);
    }
    if (!hook) throw new CliError('usage', '--wait applies to stop hooks only: use it with --hook');
    waitMs = seconds * 1000;
  }
  return { hook, waitMs };
}

function readStdin(stream: Readable): Promise<{ text: string; complete: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let complete = true;
    const finish = (): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', finish);
      stream.off('error', finish);
      stream.pause();
      resolve({ text: Buffer.concat(chunks).toString('utf8'), complete });
    };
    const onData = (chunk: Buffer): void => {
      if (kept + chunk.length > STDIN_KEEP_BYTES) {
        complete = false;
        return;
      }
      chunks.push(chunk);
      kept += chunk.length;
    };
    const timer = setTimeout(() => {
      complete = false;
      finish();
    }, STDIN_TIMEOUT_MS);
    stream.on('data', onData);
    stream.once('end', finish);
    stream.once('error', finish);
  });
}

/** A logger made only when the first line is written: loading it costs more than the rest of this command. */
class LazyLog {
  private logger: Logger | undefined;
  constructor(
    private readonly dataDir: string | undefined,
    private readonly level: Config['log_level'],
  ) {}

  async write(level: 'debug' | 'warn', message: string, fields?: LogFields): Promise<void> {
    if (this.dataDir === undefined || !existsSync(this.dataDir)) return;
    if (level === 'debug' && this.level !== 'debug') return;
    try {
      if (this.logger === undefined) {
        const { createFileLogger } = await import('../../../log.js');
        this.logger = createFileLogger(this.dataDir, this.level);
      }
      this.logger[level](message, { command: 'inbox', ...fields });
    } catch {
      // Logging is best effort here; the hook's answer matters more.
    }
  }

  async close(): Promise<void> {
    await this.logger?.close();
  }
}

interface Answer {
  /** What to print on stdout ('' for nothing). */
  readonly output: string;
  /** The hook state to record, when it changed. */
  readonly state?: HookState;
}

/** The answer for `input` given `view` and what this session was told before. */
function answer(input: HookInput | undefined, view: InboxView, previous: HookState): Answer {
  const unread = unreadText(view);
  if (input === undefined) return { output: [unread, unackedText(view)].filter((t) => t !== '').join('\n') };
  const event = input.event ?? '';
  const kind = hookKind(event);
  if (kind === undefined) return { output: '' };
  const unreadSig = unreadSignature(view);
  if (kind === 'prompt') {
    return unread === '' ? { output: '' } : { output: contextOutput(event, unread), state: { ...previous, nudged: unreadSig } };
  }
  if (kind === 'tool') {
    if (unread === '' || unreadSig === previous.nudged) return { output: '' };
    return { output: contextOutput(event, unread), state: { ...previous, nudged: unreadSig } };
  }
  const reason = [unread, unackedText(view)].filter((t) => t !== '').join(' ');
  const signature = `${unreadSig}|${unackedSignature(view)}`;
  if (reason === '') return { output: '' };
  // Each unread state blocks one stop: an agent that did not act on the reason is let go, not looped.
  const told = input.sessionId === undefined ? input.stopHookActive : signature === previous.blocked;
  if (told) return { output: '' };
  return { output: stopOutput(event, reason), state: { nudged: unreadSig, blocked: signature } };
}

function currentView(dataDir: string): { view: InboxView; harness: string | undefined; skipped: string } {
  const inbox = harnessInbox(dataDir);
  if (inbox === undefined) return { view: { names: [] }, harness: undefined, skipped: '' };
  return { view: inboxView(inbox.files), harness: inbox.harness, skipped: inbox.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ') };
}

/** Resolves at a change in the inbox folder, after `pollMs`, or after `maxMs`, whichever is first. */
function inboxChange(dataDir: string, maxMs: number, pollMs: number): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    const done = (): void => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, Math.min(pollMs, maxMs)));
    try {
      watcher = watch(inboxDir(dataDir), { persistent: false }, done);
      watcher.on('error', done);
    } catch {
      // No folder yet or no watch here: the poll still looks.
    }
  });
}

async function run(io: CliIo, flags: InboxOptions, log: { current: LazyLog }): Promise<void> {
  const options = hookMode(flags);
  let input: HookInput | undefined;
  if (options.hook && !io.stdinIsTty) {
    const stdin = await readStdin(io.stdin);
    input = parseHookInput(stdin.text, stdin.complete);
  }
  const config = loadConfig({
    configPath: flags.config,
    env: io.env,
    homeDir: io.homeDir,
    cwd: io.cwd,
  });
  const dataDir = config.data_directory;
  log.current = new LazyLog(dataDir, config.log_level);
  if (!existsSync(inboxDir(dataDir))) {
    await log.current.write('debug', 'no inbox folder: no agentbus server has registered a name here', { dataDir });
    if (io.isTty) io.stderr.write(`agentbus: no agentbus session has registered a name in ${dataDir} yet\n`);
    return;
  }
  const sessionId = input?.sessionId;
  const previous = sessionId === undefined ? { nudged: '', blocked: '' } : readHookState(dataDir, sessionId);
  // On the monotonic clock: setting the date back must not keep a harness waiting on its Stop hook.
  // Read only when there is a wait: the global `performance` loads node:perf_hooks on first use.
  const waitMs = input !== undefined && hookKind(input.event ?? '') === 'stop' ? options.waitMs : 0;
  const waitUntil = waitMs > 0 ? performance.now() + waitMs : 0;
  const parent = process.ppid;
  for (;;) {
    const { view, harness, skipped } = currentView(dataDir);
    if (skipped !== '') await log.current.write('warn', 'inbox files skipped', { harness: harness ?? null, skipped });
    if (harness === undefined) {
      await log.current.write('debug', 'no harness with an agentbus server among this process\'s ancestors', { ppid: process.ppid });
      if (io.isTty && input === undefined) io.stderr.write('agentbus: no agentbus server runs under any process above this one (run this from a harness hook)\n');
    }
    const result = answer(input, view, previous);
    if (result.output !== '') {
      if (result.state !== undefined && sessionId !== undefined) {
        try {
          writeHookState(dataDir, sessionId, result.state);
        } catch (error) {
          await log.current.write('warn', 'recording the hook state failed', { error: (error as Error).message });
        }
      }
      io.stdout.write(`${result.output}\n`);
      return;
    }
    // The harness went away (this process was handed to init): nobody is waiting for the answer.
    const left = waitMs > 0 ? waitUntil - performance.now() : 0;
    if (left <= 0 || process.ppid !== parent) return;
    await inboxChange(dataDir, left, WAIT_POLL_MS);
  }
}

/** Always exits 0: a hook's failure must never block or break its harness. */
export async function inboxCommand(io: CliIo, flags: InboxOptions): Promise<number> {
  const log = { current: new LazyLog(undefined, 'info') };
  try {
    await run(io, flags, log);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`agentbus inbox: ${message}\n`);
    await log.current.write('warn', 'inbox failed', { error: message });
  } finally {
    await log.current.close();
  }
  return 0;
}
