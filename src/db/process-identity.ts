/**
 * Who owns a lock, and whether that owner still runs. A pid alone is not an
 * identity: pids are reused, and `kill(pid, 0)` succeeds on a zombie. The
 * owner is therefore the pid plus the process start time from
 * `/proc/<pid>/stat`, and a zombie counts as dead. Same host and same pid
 * namespace only: agentbus serves one OS user on one machine.
 */
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  /** The OS process id. */
  readonly pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22), or 0 where /proc is absent. */
  readonly startTime: number;
}

interface ProcStat {
  readonly state: string;
  readonly startTime: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses; fields after it start past the last ')'.
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0] ?? '';
  const startTime = Number(fields[19]);
  if (!Number.isFinite(startTime)) return undefined;
  return { state, startTime };
}

const procAvailable = readProcStat(process.pid) !== undefined;

let self: ProcessIdentity | undefined;

/** This process's identity; computed once. */
export function currentProcess(): ProcessIdentity {
  if (self === undefined) {
    self = { pid: process.pid, startTime: readProcStat(process.pid)?.startTime ?? 0 };
  }
  return self;
}

/** True when the process that recorded this identity is still running (and not a zombie). */
export function isProcessAlive(owner: ProcessIdentity): boolean {
  if (owner.pid === process.pid) return owner.startTime === currentProcess().startTime;
  if (procAvailable) {
    const stat = readProcStat(owner.pid);
    if (stat === undefined) return false;
    if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
    return owner.startTime === 0 || stat.startTime === owner.startTime;
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone else: alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Encodes an identity for a file name or file body: `<pid>-<startTime>`. */
export function formatProcessIdentity(owner: ProcessIdentity): string {
  return `${owner.pid}-${owner.startTime}`;
}

/** Parses `<pid>-<startTime>`; undefined when the text is not one. */
export function parseProcessIdentity(text: string): ProcessIdentity | undefined {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (m === null) return undefined;
  return { pid: Number(m[1]), startTime: Number(m[2]) };
}
