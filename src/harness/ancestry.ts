/**
 * The processes above this one, nearest first, each with its identity
 * (pid + start time + realm, see src/db/processes/process-identity.ts) and command
 * name. A harness (Claude Code, Codex, Gemini CLI, Cursor) spawns both its
 * `agentbus mcp` server and its hook commands, so the two meet at the
 * harness process: that is how a hook finds its agent's names without any
 * configuration.
 *
 * Linux reads /proc (only when /proc shows this process's own pid
 * namespace); elsewhere one `ps` call lists pid, parent and command, without
 * start times (0, as process-identity does where /proc is absent).
 */
import { basename } from 'node:path';
import { currentProcess, procIsOwn, readProcStat, type ProcStat, type ProcessIdentity } from '../db/processes/process-identity.js';

/** One ancestor process. */
export interface AncestorProcess {
  /** Its identity, in the realm of this process. */
  readonly identity: ProcessIdentity;
  /** Its command name (`/proc/<pid>/comm`, or the basename `ps` shows); may be empty. */
  readonly command: string;
}

/** A bound on the walk: far more than any real chain of launchers and shells. */
const MAX_DEPTH = 64;

/** A process's stat, or undefined when it is gone or unreadable: either way the walk ends there. */
function statOf(pid: number): ProcStat | undefined {
  const stat = readProcStat(pid);
  return stat === 'gone' ? undefined : stat;
}

function fromProc(startPid: number): AncestorProcess[] {
  const realm = currentProcess().realm;
  const chain: AncestorProcess[] = [];
  let pid = statOf(startPid)?.parent ?? 0;
  while (pid > 1 && chain.length < MAX_DEPTH) {
    const entry = statOf(pid);
    if (entry === undefined) break;
    chain.push({ identity: { pid, startTime: entry.startTime, realm }, command: entry.command });
    pid = entry.parent;
  }
  return chain;
}

function fromPs(startPid: number): AncestorProcess[] {
  // Loaded here, not at the top: on Linux (/proc) a hook never pays for node:child_process.
  const { execFileSync } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
  let listing: string;
  try {
    listing = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [];
  }
  const table = new Map<number, { parent: number; command: string }>();
  for (const line of listing.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (m !== null) table.set(Number(m[1]), { parent: Number(m[2]), command: basename((m[3] ?? '').trim()) });
  }
  const realm = currentProcess().realm;
  const chain: AncestorProcess[] = [];
  let pid = table.get(startPid)?.parent ?? (startPid === process.pid ? process.ppid : 0);
  while (pid > 1 && chain.length < MAX_DEPTH) {
    const entry = table.get(pid);
    if (entry === undefined) break;
    chain.push({ identity: { pid, startTime: 0, realm }, command: entry.command });
    pid = entry.parent;
  }
  return chain;
}

/** The ancestors of this process (or of `startPid`), parent first, up to but not including pid 1. */
export function ancestors(startPid: number = process.pid): AncestorProcess[] {
  if (process.platform === 'linux') return procIsOwn() ? fromProc(startPid) : [];
  return fromPs(startPid);
}

// Processes that only start another program: shells, `env`, and the package
// runners (npx and `npm exec` name themselves "npm exec ..."). A harness that
// launches agentbus through one of them is still the harness.
const LAUNCHERS = new Set(['sh', 'dash', 'bash', 'zsh', 'ksh', 'mksh', 'fish', 'tcsh', 'csh', 'env', 'npm', 'npx', 'pnpm', 'yarn', 'bunx', 'corepack']);

/** True when `command` names a shell or package runner rather than a program that could be a harness. */
export function isLauncher(command: string): boolean {
  const name = command.trim();
  return LAUNCHERS.has(name) || name.startsWith('npm ') || name.startsWith('npx ');
}

/**
 * The harness of a process with these ancestors: the nearest one that is not
 * a shell or package runner. Undefined when there is none (started by init,
 * or ancestry unreadable here).
 */
export function harnessProcess(chain: readonly AncestorProcess[]): AncestorProcess | undefined {
  return chain.find((p) => !isLauncher(p.command));
}
