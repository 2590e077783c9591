/**
 * Real git repositories for reservation and guard tests: `git init` in a
 * fresh directory, with an identity so commits work on a bare CI machine.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../support/test-driver.js';

/** Runs git in `cwd` with a clean environment (no GIT_DIR of an outer hook); returns stdout. */
export function git(cwd: string, args: readonly string[], env: Record<string, string> = {}): string {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_'))) as Record<string, string>;
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...clean, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A new repository (real path) with one commit, user name and email set. */
export function gitRepo(): string {
  const dir = realpathSync(tempDir('agentbus-repo-'));
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.email', 'agent@example.invalid']);
  git(dir, ['config', 'user.name', 'Agent']);
  git(dir, ['config', 'commit.gpgsign', 'false']);
  writeFiles(dir, { 'README.md': '# test\n' });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'first']);
  return dir;
}

/** Writes files (relative path -> content) under `dir`, creating directories. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** A second worktree of `repo` on a new branch. */
export function gitWorktree(repo: string, branch: string): string {
  const dir = join(realpathSync(tempDir('agentbus-worktree-')), 'wt');
  git(repo, ['worktree', 'add', '-q', '-b', branch, dir]);
  return dir;
}

/** A separate clone of `repo`. */
export function gitClone(repo: string): string {
  const dir = join(realpathSync(tempDir('agentbus-clone-')), 'clone');
  git(dirname(dir), ['clone', '-q', repo, dir]);
  git(dir, ['config', 'user.email', 'agent@example.invalid']);
  git(dir, ['config', 'user.name', 'Agent']);
  return dir;
}

/**
 * The environment a git command gets when a person runs it: none of the
 * test runner's GIT_*, AGENTBUS_* or npm_* variables (under `npx vitest`,
 * npm_command=exec would make bin/agentbus.js hand over to npx's Node).
 */
export function personEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !entry[0].startsWith('GIT_') && !entry[0].startsWith('AGENTBUS_') && !entry[0].startsWith('npm_'),
    ),
  );
}
