/**
 * A following CLI command (`agentbus tail`, `agentbus web`) as a real
 * process: its output as it arrives, a wait for a pattern in it, and a clean
 * stop with SIGINT. Every process still running at the end of a test is killed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach } from 'vitest';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { cliEnv } from './cli-process.js';

export interface FollowingCli {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with stdout once it matches `pattern`; rejects after `ms` with what was seen. */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  /** Sends SIGINT and resolves to the exit code. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcessWithoutNullStreams>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** Spawns `agentbus <args>` against `dataDir` (its config.json) with the project's driver. */
export function startCli(dataDir: string, args: readonly string[], env: Record<string, string> = {}): FollowingCli {
  const child = spawn(process.execPath, [AGENTBUS_BIN, ...args], {
    env: cliEnv(dataDir, env),
    cwd: dataDir,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = once(child, 'close').then(([code]) => {
    running.delete(child);
    return code as number | null;
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of [...listeners]) l();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(pattern, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(out)) return;
          cleanup();
          resolve(out);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${pattern} in stdout after ${ms} ms; stdout: ${out}; stderr: ${err}`));
        }, ms);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exited.then(() => {
          if (!listeners.has(check)) return;
          cleanup();
          if (pattern.test(out)) resolve(out);
          else reject(new Error(`exited without ${pattern}; stdout: ${out}; stderr: ${err}`));
        });
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
