/**
 * Who a process is, and whether it still runs, judged so that the answer is
 * never wrong in the dangerous direction.
 *
 * A pid alone is not an identity: pids are reused, `kill(pid, 0)` succeeds on
 * a zombie, and a pid means nothing outside its pid namespace (a container, a
 * sandbox made with `unshare --pid`) or on another machine sharing the file
 * over a network. An identity is therefore the pid, the start time from
 * `/proc/<pid>/stat`, and the realm the pid belongs to: the kernel's boot id
 * plus the pid namespace. A process is `dead` only when this process can see
 * that realm's /proc and it says so; an owner from another realm is `unknown`,
 * and whoever asks must treat it as alive or judge it by something that does
 * not depend on pids (a lease it renews).
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** Where a pid means something: one kernel boot and one pid namespace. */
export interface ProcessRealm {
  /** The kernel boot id without dashes (Linux), or `host:<hostname>` elsewhere; never empty. */
  readonly boot: string;
  /** The pid namespace's inode number (Linux), or 0 where there are none. */
  readonly pidNamespace: number;
}

export interface ProcessIdentity {
  /** The OS process id, as seen inside its own pid namespace. */
  readonly pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22), or 0 where /proc is absent. */
  readonly startTime: number;
  /** The realm the pid belongs to; undefined when it was not recorded (an older agentbus), which is never judged dead by pid. */
  readonly realm: ProcessRealm | undefined;
}

/** `alive`: it runs. `dead`: certainly gone. `unknown`: another realm, or no way to tell: never treat as dead. */
export type Liveness = 'alive' | 'dead' | 'unknown';

/** The fields of `/proc/<pid>/stat` agentbus reads (proc(5)). */
export interface ProcStat {
  /** Field 2, without its parentheses: the command name (`comm`, at most 15 bytes); may contain spaces and parentheses. */
  readonly command: string;
  /** Field 3: the state letter (R, S, D, Z for a zombie, X or x when dead, ...). */
  readonly state: string;
  /** Field 4: the parent's pid (0 for a process whose parent is outside its pid namespace, and for pid 1). */
  readonly parent: number;
  /** Field 22: start time in clock ticks since boot. */
  readonly startTime: number;
}

/**
 * `/proc/<pid>/stat` of the /proc this process sees: its fields; 'gone' when
 * no such process exists; undefined when it could not be read or parsed,
 * which says nothing about the process (never treat that as gone).
 */
export function readProcStat(pid: number): ProcStat | 'gone' | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    // Only "no such entry" means no such process; EMFILE, EACCES or EIO under load say nothing about it.
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : undefined;
  }
  // The command name may contain spaces and parentheses; the fields after it start past the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0] ?? '';
  const parent = Number(fields[1]);
  const startTime = Number(fields[19]);
  if (state === '' || !Number.isInteger(parent) || !Number.isFinite(startTime)) return undefined;
  return { command: text.slice(open + 1, close), state, parent, startTime };
}

interface SelfView {
  /** This process's identity. */
  readonly identity: ProcessIdentity;
  /** True when /proc shows this process's own pid namespace, so other pids in it can be looked up. */
  readonly procIsOwn: boolean;
  /** True when this process's CLOCK_MONOTONIC is the boot's own (no time namespace moved it). */
  readonly clockIsBoots: boolean;
}

/** The time namespace every process starts in (PROC_TIME_INIT_INO in the kernel). */
const INITIAL_TIME_NAMESPACE = 0xeffffffa;

/**
 * Whether CLOCK_MONOTONIC here is the boot's own: true in the initial time
 * namespace, and on kernels without time namespaces (no /proc/self/ns/time,
 * before Linux 5.6) where nothing can move it; false when /proc cannot tell.
 */
function readClockIsBoots(procIsOwn: boolean): boolean {
  if (process.platform !== 'linux') return true;
  if (!procIsOwn) return false;
  try {
    const m = /^time:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/time'));
    return m !== null && Number(m[1]) === INITIAL_TIME_NAMESPACE;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function readBootId(): string | undefined {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim().replaceAll('-', '').toLowerCase();
    return /^[0-9a-f]{32}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

function readPidNamespace(): number | undefined {
  try {
    const m = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

function readSelf(): SelfView {
  const pid = process.pid;
  // /proc mounted for another pid namespace (`unshare --pid` without
  // --mount-proc, some sandboxes) names this process by another pid: then no
  // pid looked up there can be trusted.
  let procIsOwn = false;
  try {
    procIsOwn = readlinkSync('/proc/self') === String(pid);
  } catch {
    procIsOwn = false;
  }
  const read = procIsOwn ? readProcStat(pid) : undefined;
  const stat = read === 'gone' ? undefined : read;
  const bootId = readBootId();
  const pidNamespace = readPidNamespace();
  let realm: ProcessRealm | undefined;
  if (bootId !== undefined && pidNamespace !== undefined) realm = { boot: bootId, pidNamespace };
  else if (process.platform !== 'linux') realm = { boot: `host:${hostname()}`, pidNamespace: 0 };
  const ownProc = procIsOwn && stat !== undefined;
  return { identity: { pid, startTime: stat?.startTime ?? 0, realm }, procIsOwn: ownProc, clockIsBoots: readClockIsBoots(ownProc) };
}

let self: SelfView | undefined;

function selfView(): SelfView {
  self ??= readSelf();
  return self;
}

/** This process's identity; computed once. */
export function currentProcess(): ProcessIdentity {
  return selfView().identity;
}

/** True when /proc shows this process's own pid namespace (and its own entry), so other pids can be looked up there; computed once. */
export function procIsOwn(): boolean {
  return selfView().procIsOwn;
}

/**
 * Milliseconds on the kernel's CLOCK_MONOTONIC (libuv's hrtime), which every
 * process of one boot shares unless a time namespace offsets it. Never jumps
 * with the wall clock. Lease stamps are written on this clock.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/**
 * True when this process's monotonic clock is the boot's own, so a stamp it
 * writes can be compared by any other process of the same boot whose clock is
 * the boot's own too.
 */
export function clockIsBoots(): boolean {
  return selfView().clockIsBoots;
}

/** True when both realms are known and equal. */
export function sameRealm(a: ProcessRealm | undefined, b: ProcessRealm | undefined): boolean {
  return a !== undefined && b !== undefined && a.boot === b.boot && a.pidNamespace === b.pidNamespace;
}

/**
 * Whether the process that recorded `owner` still runs. `dead` only when that
 * is certain: same boot, same pid namespace, a /proc of that namespace (or,
 * without /proc, a kernel that answers `kill(pid, 0)` with ESRCH) that shows
 * no such process, a zombie, or a different start time.
 */
export function judgeProcess(owner: ProcessIdentity): Liveness {
  const me = selfView();
  if (!sameRealm(owner.realm, me.identity.realm)) return 'unknown';
  if (owner.pid === me.identity.pid) return owner.startTime === me.identity.startTime ? 'alive' : 'dead';
  if (me.procIsOwn) {
    const stat = readProcStat(owner.pid);
    if (stat === 'gone') return 'dead';
    if (stat === undefined) return 'unknown';
    if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return 'dead';
    if (owner.startTime === 0) return 'alive';
    return stat.startTime === owner.startTime ? 'alive' : 'dead';
  }
  if (process.platform === 'linux') return 'unknown';
  // No /proc (macOS and the BSDs have no pid namespaces): the kernel answers
  // for its own pids. A reused pid reads as alive, the safe direction.
  try {
    process.kill(owner.pid, 0);
    return 'alive';
  } catch (error) {
    // EPERM means it exists but belongs to someone else: alive.
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'alive';
  }
}

/** True only when the owner is certainly gone (see judgeProcess); `unknown` is not dead. */
export function isCertainlyDead(owner: ProcessIdentity): boolean {
  return judgeProcess(owner) === 'dead';
}

/**
 * Encodes an identity for a file name or file body:
 * `<pid>-<startTime>@<boot>.<pidNamespace>`, or `<pid>-<startTime>` without a realm.
 */
export function formatProcessIdentity(owner: ProcessIdentity): string {
  const base = `${owner.pid}-${owner.startTime}`;
  return owner.realm === undefined ? base : `${base}@${owner.realm.boot}.${owner.realm.pidNamespace}`;
}

/** Parses formatProcessIdentity's text; undefined when the text is not one. */
export function parseProcessIdentity(text: string): ProcessIdentity | undefined {
  const m = /^(\d+)-(\d+)(?:@([0-9a-z:._-]+)\.(\d+))?$/i.exec(text.trim());
  if (m === null) return undefined;
  const realm = m[3] === undefined ? undefined : { boot: m[3], pidNamespace: Number(m[4]) };
  return { pid: Number(m[1]), startTime: Number(m[2]), realm };
}

/** A short description of an owner for messages: `pid 123` or `pid 13 in another pid namespace or machine`. */
export function describeProcess(owner: ProcessIdentity): string {
  return sameRealm(owner.realm, currentProcess().realm) ? `pid ${owner.pid}` : `pid ${owner.pid} in another pid namespace or machine`;
}
