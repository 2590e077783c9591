/**
 * Running `node bin/agentbus.js <command>` as a real process against an
 * isolated data directory and config file, with the driver of the current
 * vitest project. stdin is a pipe (never a terminal), as in a script.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/cli-io.js';
import { systemClock } from '../../src/clock.js';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { withoutDacOverride } from '../support/privileges.js';
import { testDriverEnv } from '../support/test-driver.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliEnvOptions {
  /** Written to `<dataDir>/config.json` (the file startMcp writes too); default {}. */
  readonly config?: Record<string, unknown>;
}

/** The data directory `dataDir` with its config file, as startMcp lays it out. */
export function prepareCliDir(dataDir: string, options: CliEnvOptions = {}): string {
  mkdirSync(dataDir, { recursive: true });
  const configPath = join(dataDir, 'config.json');
  if (options.config !== undefined || !existsSync(configPath)) writeFileSync(configPath, JSON.stringify(options.config ?? {}));
  return configPath;
}

export interface RunCliOptions {
  /** Extra environment, e.g. AGENTBUS_DRIVER for the other driver. */
  readonly env?: Record<string, string>;
  /** Written to stdin, which is then closed. */
  readonly input?: string;
  readonly cwd?: string;
  /** The agentbus executable to run (default: this checkout's bin/agentbus.js), e.g. an installed package's. */
  readonly bin?: string;
  /** Run as root without CAP_DAC_OVERRIDE (setpriv), so file modes and owners apply; only when the tests run as root. */
  readonly withoutDacOverride?: boolean;
}

/** The environment a CLI process of the tests gets: `dataDir` as home, data directory and config, the project's driver (on postgres the data directory's database_url), then `extra`. */
export function cliEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: dataDir,
    AGENTBUS_DATA_DIR: dataDir,
    AGENTBUS_CONFIG: join(dataDir, 'config.json'),
    ...testDriverEnv(dataDir),
    ...extra,
  };
}

/** Runs the CLI to completion. */
export async function runCli(dataDir: string, args: readonly string[], options: RunCliOptions = {}): Promise<CliRun> {
  const [command, argv] = options.withoutDacOverride
    ? withoutDacOverride(process.execPath, [options.bin ?? AGENTBUS_BIN, ...args])
    : [process.execPath, [options.bin ?? AGENTBUS_BIN, ...args]];
  const child = spawn(command, argv, {
    env: cliEnv(dataDir, options.env),
    cwd: options.cwd ?? dataDir,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(options.input ?? '');
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** Parses the JSON a `--json` run printed, failing with its stderr when it printed none. */
export function jsonOf(run: CliRun): any {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`expected JSON on stdout (exit ${run.code}); stderr: ${run.stderr}`);
  }
}

/** Resolves once the process `pid` has exited (a closed client does not wait for its server). */
export async function waitForPidExit(pid: number | null | undefined): Promise<void> {
  if (pid === null || pid === undefined) return;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface MemoryIoOptions {
  /** What stdin answers. */
  readonly input?: string;
  /** Whether stdin claims to be a terminal (prompts allowed). */
  readonly stdinIsTty?: boolean;
  /** Whether stdout claims to be a terminal (progress shown). */
  readonly isTty?: boolean;
  /** Extra environment, e.g. AGENTBUS_PROGRESS_AFTER_MS. */
  readonly env?: Record<string, string>;
}

/** In-process io for `main()`, for what a pipe cannot show: a terminal on stdin or stdout. */
export function memoryIo(dataDir: string, options: MemoryIoOptions = {}): CliIo & { out(): string; err(): string } {
  const stdin = new PassThrough();
  stdin.end(options.input ?? '');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    stdin,
    stdout,
    stderr,
    env: { AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testDriverEnv(dataDir), ...options.env },
    cwd: dataDir,
    homeDir: dataDir,
    clock: systemClock,
    isTty: options.isTty ?? false,
    stdinIsTty: options.stdinIsTty ?? false,
    out: () => out,
    err: () => err,
  };
}
