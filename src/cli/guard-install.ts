/**
 * `agentbus guard --install`: writes the repository's pre-commit hook. The
 * hook runs this installation's agentbus with the node that installed it
 * (absolute paths, so it works without `npm link`), turns the guard's
 * refusal (exit 3) into a refused commit, and lets the commit through on
 * anything else, so a broken, moved or uninstalled agentbus never blocks a
 * commit. It never overwrites a hook it did not write.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../package-root.js';
import { CliError } from './cli-error.js';

/** The line that marks a hook as agentbus's own. */
export const HOOK_MARKER = '# agentbus guard: installed by `agentbus guard --install`';

/** The line to add to an existing hook (or a hook manager) instead. */
export const HOOK_LINE = 'agentbus guard; [ $? -ne 3 ] || exit 1';

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** The pre-commit hook text for `node` running `bin` with `args`. */
export function hookScript(node: string, bin: string, args: readonly string[]): string {
  const command = [node, bin, 'guard', ...args].map(shellQuote).join(' ');
  return [
    '#!/bin/sh',
    HOOK_MARKER,
    '# Refuses a commit whose staged files another agent reserved exclusively; `git commit --no-verify` skips it.',
    '# agentbus exits 3 to refuse; any other failure (agentbus moved, broken or gone) lets the commit through.',
    command,
    'status=$?',
    '[ "$status" -eq 3 ] && exit 1',
    '[ "$status" -eq 0 ] || echo "agentbus guard: exited $status; allowing the commit (run agentbus guard --install again to repair the hook)" >&2',
    'exit 0',
    '',
  ].join('\n');
}

/** The hooks directory git uses for the repository at `cwd` (core.hooksPath honoured; shared by all worktrees). */
function hooksDirectory(cwd: string, env: NodeJS.ProcessEnv): string {
  let out: string;
  try {
    out = execFileSync('git', ['rev-parse', '--git-path', 'hooks'], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n')[0];
    throw new CliError('failed', `${cwd} is not inside a git repository (${stderr || (error as Error).message}); run agentbus guard --install in the repository`);
  }
  return resolve(cwd, out.trim());
}

export interface InstallResult {
  /** The hook file written. */
  readonly path: string;
  /** True when an earlier agentbus hook was replaced. */
  readonly updated: boolean;
}

/**
 * Installs the hook; `configPath` (absolute), when given, is passed on as
 * `--config`. Throws CliError `refused` when a foreign pre-commit hook exists.
 */
export function installGuard(cwd: string, env: NodeJS.ProcessEnv, configPath: string | undefined): InstallResult {
  const dir = hooksDirectory(cwd, env);
  const path = join(dir, 'pre-commit');
  const args = configPath === undefined ? [] : ['--config', configPath];
  const script = hookScript(process.execPath, join(packageRoot(), 'bin', 'agentbus.js'), args);
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (existing !== undefined && !existing.includes(HOOK_MARKER)) {
    throw new CliError(
      'refused',
      `${path} already exists and was not written by agentbus; nothing changed. Add this line to it (after its other checks): ${HOOK_LINE}`,
    );
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path, script, { mode: 0o755 });
  chmodSync(path, 0o755);
  return { path, updated: existing !== undefined };
}
