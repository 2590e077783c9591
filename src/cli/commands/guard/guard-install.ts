/**
 * `agentbus guard --install`: writes the repository's pre-commit and
 * pre-push hooks. Each runs this installation's agentbus with a Node that can
 * read the bus (absolute paths, so it works without `npm link`; see
 * guard-node.ts for which Node), turns the guard's refusal (exit 3) into a
 * refused commit or push, and lets it through on anything else, so a broken,
 * moved or uninstalled agentbus never blocks one: a hook whose agentbus or
 * Node is gone says so in one line. It never overwrites a hook it did not
 * write: with one such hook present it writes neither.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../../package-root.js';
import { CliError } from '../../cli-error.js';

/** The line that marks a hook as agentbus's own. */
export const HOOK_MARKER = '# agentbus guard: installed by `agentbus guard --install`';

/** The git hooks agentbus writes. */
export type HookKind = 'pre-commit' | 'pre-push';

/** Per hook: the guard's arguments, what it guards (for messages), and the line to add to an existing hook (or a hook manager) instead. */
const HOOKS: Readonly<Record<HookKind, { readonly args: readonly string[]; readonly what: string; readonly line: string }>> = {
  'pre-commit': { args: [], what: 'commit', line: 'agentbus guard; [ $? -ne 3 ] || exit 1' },
  // git gives a pre-push hook the remote's name as $1 and the refs being pushed on stdin.
  'pre-push': { args: ['--pre-push'], what: 'push', line: 'agentbus guard --pre-push --remote "$1"; [ $? -ne 3 ] || exit 1' },
};

/** The line to add to an existing pre-commit hook (or a hook manager) instead. */
export const HOOK_LINE = HOOKS['pre-commit'].line;
/** The line to add to an existing pre-push hook instead. */
export const PRE_PUSH_HOOK_LINE = HOOKS['pre-push'].line;

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** The `kind` hook text for `node` running `bin` with `args`. */
export function hookScript(kind: HookKind, node: string, bin: string, args: readonly string[]): string {
  const { what } = HOOKS[kind];
  const remote = kind === 'pre-push' ? ' --remote "$1"' : '';
  const command = `"$node" "$bin" ${['guard', ...HOOKS[kind].args, ...args].map(shellQuote).join(' ')}${remote}`;
  const repair = 'run agentbus guard --install again to repair the hook';
  return [
    '#!/bin/sh',
    HOOK_MARKER,
    kind === 'pre-commit'
      ? '# Refuses a commit whose staged files another agent reserved exclusively; `git commit --no-verify` skips it.'
      : '# Refuses a push whose commits change files another agent reserved exclusively; `git push --no-verify` skips it.',
    `# agentbus exits 3 to refuse; any other failure (agentbus moved, broken or gone) lets the ${what} through.`,
    `node=${shellQuote(node)}`,
    `bin=${shellQuote(bin)}`,
    'if [ ! -x "$node" ] || [ ! -f "$bin" ]; then',
    `  echo "agentbus guard: $bin or $node is gone (agentbus moved or removed), file reservations not checked; allowing the ${what} (${repair})" >&2`,
    '  exit 0',
    'fi',
    command,
    'status=$?',
    '[ "$status" -eq 3 ] && exit 1',
    `[ "$status" -eq 0 ] || echo "agentbus guard: exited $status; allowing the ${what} (${repair})" >&2`,
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

export interface InstalledHook {
  /** Which hook. */
  readonly kind: HookKind;
  /** The hook file written. */
  readonly path: string;
  /** True when an earlier agentbus hook was replaced. */
  readonly updated: boolean;
}

export interface InstallOptions {
  /** Passed on to the guard as `--config` (absolute), when given. */
  readonly configPath: string | undefined;
  /** The node the hooks run (absolute). */
  readonly node: string;
}

/**
 * Installs both hooks. Throws CliError `refused`, writing nothing, when a
 * hook agentbus did not write is in the way.
 */
export function installGuard(cwd: string, env: NodeJS.ProcessEnv, options: InstallOptions): InstalledHook[] {
  const dir = hooksDirectory(cwd, env);
  const args = options.configPath === undefined ? [] : ['--config', options.configPath];
  const bin = join(packageRoot(), 'bin', 'agentbus.js');
  const plans = (Object.keys(HOOKS) as HookKind[]).map((kind) => {
    const path = join(dir, kind);
    return { kind, path, existing: existsSync(path) ? readFileSync(path, 'utf8') : undefined };
  });
  const foreign = plans.filter((p) => p.existing !== undefined && !p.existing.includes(HOOK_MARKER));
  if (foreign.length > 0) {
    const fixes = foreign.map((p) => `${p.path} already exists and was not written by agentbus: add this line to it (after its other checks): ${HOOKS[p.kind].line}`);
    throw new CliError('refused', `nothing changed: ${fixes.join('; ')}`);
  }
  mkdirSync(dir, { recursive: true });
  return plans.map(({ kind, path, existing }) => {
    writeFileSync(path, hookScript(kind, options.node, bin, args), { mode: 0o755 });
    chmodSync(path, 0o755);
    return { kind, path, updated: existing !== undefined };
  });
}
