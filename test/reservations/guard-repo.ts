/**
 * Guard tests' repositories: a real git repository with the guard installed
 * through the CLI, agents in harnesses of their own, and commits run as a
 * shell would run them.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { prepareCliDir, runCli } from '../cli/cli-process.js';
import { fixturePath } from '../support/child-process.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir, testBusEnv } from '../support/test-driver.js';
import { git, gitRepo, personEnv } from './git-repo.js';

export interface Commit {
  readonly ok: boolean;
  readonly stderr: string;
}

/** `git commit` in `cwd` as a shell would run it, the hook seeing the bus in `dataDir`; HEAD moved or not is the verdict. */
export function commit(cwd: string, dataDir: string, args: readonly string[], env: Record<string, string> = {}): Commit {
  const before = git(cwd, ['rev-parse', 'HEAD']);
  const clean = personEnv();
  const run = spawnSync('git', ['commit', '-q', '-m', 'change', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...clean, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testBusEnv(dataDir), ...env },
  });
  const moved = git(cwd, ['rev-parse', 'HEAD']) !== before;
  expect(moved, run.stderr).toBe(run.status === 0);
  return { ok: run.status === 0, stderr: run.stderr };
}

/** A repository with the guard installed through the CLI, and a bus with agents working in it. */
export async function guarded(): Promise<{ repo: string; dataDir: string }> {
  const repo = gitRepo();
  const dataDir = tempDir();
  prepareCliDir(dataDir);
  const install = await runCli(dataDir, ['guard', '--install'], { cwd: repo });
  expect(install.code, install.stderr).toBe(0);
  expect(install.stdout).toMatch(/^installed .*\/\.git\/hooks\/pre-commit: .*\ninstalled .*\/\.git\/hooks\/pre-push: /);
  return { repo, dataDir };
}

/** An agent in a harness of its own (harness-shim.cjs), so the commits this test makes are not its harness session's. */
export async function agent(dataDir: string, repo: string, name: string): Promise<McpProcess> {
  const p = await startMcp(dataDir, { cwd: repo, bin: fixturePath('harness-shim.cjs') });
  expect((await p.call('register', { name })).display_name).toBe(name);
  return p;
}

