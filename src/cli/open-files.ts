/**
 * Which processes hold a file open. On Linux every process's descriptors are
 * links in /proc/<pid>/fd; elsewhere there is no portable way from Node, and
 * the caller falls back on SQLite's own locks (see convert-command.ts).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface OpenHandle {
  /** The process holding the file. */
  readonly pid: number;
  /** Its command line, for the message a person reads. */
  readonly command: string;
  /** Which of the asked-for files it holds. */
  readonly file: string;
}

/** True when /proc/<pid>/fd can be listed here (Linux). */
export function procAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/fd`);
}

/**
 * Processes other than this one holding any of `paths` open; undefined when
 * /proc is not available. Processes of other users cannot be read and are
 * skipped: agentbus serves one OS user.
 */
export function processesHolding(paths: readonly string[]): OpenHandle[] | undefined {
  if (!procAvailable()) return undefined;
  const wanted = new Set(paths);
  const found: OpenHandle[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!wanted.has(target)) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      } catch {
        // exited meanwhile
      }
      found.push({ pid, command, file: target });
      break;
    }
  }
  return found;
}
