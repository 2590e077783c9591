/**
 * Spawning real OS processes for multi-process tests: each child runs a
 * fixture script with the same Node binary and driver as the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { testDriverName } from './test-driver.js';

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts a fixture; its stdout and stderr are collected. */
export function startFixture(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): ChildProcess & { output: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [fixturePath(name), ...args], {
    env: { ...process.env, AGENTBUS_DRIVER: testDriverName(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcess & { output: { stdout: string; stderr: string } };
  child.output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (child.output.stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (child.output.stderr += d));
  return child;
}

/** Waits for a child to exit, killing it and failing after `timeoutMs`. */
export async function waitForExit(child: ReturnType<typeof startFixture>, timeoutMs = 60_000): Promise<ChildResult> {
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  } finally {
    clearTimeout(timer);
  }
  // Let the pipes drain their last chunks.
  await new Promise((r) => setImmediate(r));
  return { code: child.exitCode, signal: child.signalCode, ...child.output };
}

/** Runs a fixture to completion. */
export async function runFixture(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<ChildResult> {
  return waitForExit(startFixture(name, args, env), timeoutMs);
}

/** Resolves once the child has printed a line equal to `line` on stdout. */
export async function waitForLine(child: ReturnType<typeof startFixture>, line: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!child.output.stdout.split('\n').includes(line)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`child exited before printing ${line}: ${child.output.stderr}`);
    }
    if (Date.now() > deadline) throw new Error(`child did not print ${line} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
