/**
 * Processes in other pid namespaces, as containers and sandboxes make them:
 * `unshare --pid --fork --mount-proc` (each process its own namespace, /proc
 * of that namespace) and a long-lived namespace that several processes join
 * with `nsenter`. Needs root (CI runs as root); where the kernel or the user
 * refuses, pidNamespacesUnavailable() says why and the tests skip with it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

const UNSHARE = ['unshare', '--pid', '--fork', '--mount-proc'];

let probed: string | undefined | null = null;

/** Why pid namespaces cannot be made here; undefined when they can. */
export function pidNamespacesUnavailable(): string | undefined {
  if (probed !== null) return probed;
  if (process.platform !== 'linux') {
    probed = `pid namespaces are Linux only (this is ${process.platform})`;
    return probed;
  }
  const r = spawnSync(UNSHARE[0] as string, [...UNSHARE.slice(1), 'true'], { encoding: 'utf8', timeout: 10_000 });
  const n = spawnSync('nsenter', ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (r.error !== undefined || r.status !== 0) {
    probed = `\`${UNSHARE.join(' ')}\` is refused here: ${(r.error?.message ?? r.stderr).trim() || `exit ${r.status}`} (needs root or user namespaces)`;
  } else if (n.error !== undefined || n.status !== 0) {
    probed = `nsenter is not available: ${(n.error?.message ?? n.stderr).trim()}`;
  } else {
    probed = undefined;
  }
  return probed;
}

/** A command prefix that runs a process in a pid namespace of its own (its pid there is 1). */
export function ownNamespacePrefix(): string[] {
  return [...UNSHARE];
}

/** The pids of a process's children (host view). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** Waits until `pid` has a child process; returns its host pid. */
export async function firstChild(pid: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const kids = childPids(pid);
    if (kids.length > 0) return kids[0] as number;
    if (Date.now() > deadline) throw new Error(`process ${pid} started no child within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A pid namespace kept alive by a sleeping init (pid 1 inside). Processes
 * started with prefix() join it; kill() ends the init, and with it (the
 * kernel's rule for a namespace's init) every process inside, as a crash of
 * the whole container would.
 */
export class PidNamespace {
  readonly #unshare: ChildProcess;
  /** Host pid of the namespace's init. */
  readonly initPid: number;

  private constructor(unshare: ChildProcess, initPid: number) {
    this.#unshare = unshare;
    this.initPid = initPid;
  }

  static async start(): Promise<PidNamespace> {
    const unshare = spawn(UNSHARE[0] as string, [...UNSHARE.slice(1), 'sleep', '3600'], { stdio: 'ignore' });
    const init = await firstChild(unshare.pid as number);
    return new PidNamespace(unshare, init);
  }

  /** A command prefix that runs a process inside this namespace, with its /proc. */
  prefix(): string[] {
    return ['nsenter', '--target', String(this.initPid), '--pid', '--mount'];
  }

  /** Kills the namespace's init and so every process in it. */
  kill(): void {
    try {
      process.kill(this.initPid, 'SIGKILL');
    } catch {
      // already gone
    }
    this.#unshare.kill('SIGKILL');
  }
}
