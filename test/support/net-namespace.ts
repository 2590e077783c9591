/**
 * Simulated machines for the two-machine tests: each a network namespace
 * (`ip netns`) joined to the host by a veth pair, its own /30, so a process
 * run in it reaches the host (PostgreSQL listening on the host side) only
 * over TCP through its link, and taking the link down is a dropped network.
 * Names and subnets are derived from the test process's pid, so parallel
 * runs do not collide. Needs root and iproute2: without them it throws
 * saying so (the test fails, never skips).
 */
import { execFileSync } from 'node:child_process';

export interface Machine {
  /** The namespace's name. */
  readonly ns: string;
  /** The host side's address: what processes in the namespace connect to. */
  readonly hostAddress: string;
  /** The namespace side's address: where its connections come from. */
  readonly nsAddress: string;
  /** The /30 both addresses are in. */
  readonly cidr: string;
  /** The host's end of the veth pair (deleted with the namespace, or by itself when making it failed midway). */
  readonly hostIf: string;
  /** The command prefix that runs a program inside the namespace. */
  readonly exec: readonly string[];
  /** Takes the namespace's end of the link down (a dropped network) or up again. */
  link(state: 'up' | 'down'): void;
}

function ip(args: readonly string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Throws a clear error when this machine cannot make namespaces. */
function requireNamespaces(): void {
  if (process.getuid?.() !== 0) throw new Error('the two-machine tests need root (ip netns add); run them as root, as .ci/run does');
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    throw new Error('the two-machine tests need iproute2 (`ip`): apt-get install iproute2');
  }
}

/** The `index`th (0..3) machine's /30 for this pid, in 10.0.0.0/8: 20 bits of the pid, 2 of the index, 2 of the host. */
function subnet(index: number): [string, string, string] {
  const base = ((((process.pid & 0xfffff) << 2) | index) << 2) >>> 0;
  const octets = (n: number): string => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  return [octets(base + 1), octets(base + 2), `${octets(base)}/30`];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Deletes the namespaces a killed earlier run left behind (its afterAll never ran): ours are named after a pid that is gone. */
function removeLeftovers(): void {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((line) => line.split(' ')[0] ?? '');
  for (const name of names) {
    const pid = /^ab(\d+)m\d+$/.exec(name)?.[1];
    if (pid !== undefined && !alive(Number(pid))) {
      try {
        ip(['netns', 'del', name]);
      } catch {
        // Another run removed it first.
      }
    }
  }
}

/** Makes `count` (at most 4) machines, each pushed onto `made` as soon as it exists, so removeMachines(made) undoes a failure midway too. */
export function makeMachines(count: number, made: Machine[]): Machine[] {
  requireNamespaces();
  removeLeftovers();
  for (let i = 0; i < count; i++) {
    const ns = `ab${process.pid}m${i}`;
    const hostIf = `vh${process.pid}m${i}`;
    const nsIf = `vn${process.pid}m${i}`;
    const [hostAddress, nsAddress, cidr] = subnet(i);
    const inNs = (args: readonly string[]): void => ip(['netns', 'exec', ns, 'ip', ...args]);
    ip(['netns', 'add', ns]);
    made.push({ ns, hostIf, hostAddress, nsAddress, cidr, exec: ['ip', 'netns', 'exec', ns], link: (state) => inNs(['link', 'set', nsIf, state]) });
    ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf]);
    ip(['link', 'set', nsIf, 'netns', ns]);
    ip(['addr', 'add', `${hostAddress}/30`, 'dev', hostIf]);
    ip(['link', 'set', hostIf, 'up']);
    inNs(['addr', 'add', `${nsAddress}/30`, 'dev', nsIf]);
    inNs(['link', 'set', nsIf, 'up']);
    inNs(['link', 'set', 'lo', 'up']);
  }
  return made;
}

/** Deletes the namespaces (which deletes their veth pairs); never throws. */
export function removeMachines(made: Machine[]): void {
  for (const machine of made.splice(0)) {
    for (const args of [['netns', 'del', machine.ns], ['link', 'del', machine.hostIf]]) {
      try {
        ip(args);
      } catch {
        // Already gone (deleting the namespace deletes the pair).
      }
    }
  }
}
