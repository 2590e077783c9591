/**
 * Which processes hold a file open, whatever they are (agentbus of any
 * version, sqlite3, an editor). On Linux every process's descriptors are
 * links in /proc/<pid>/fd; elsewhere (macOS, the BSDs) `lsof` answers, when it
 * is installed. Neither sees processes of other users (agentbus serves one
 * user) or, for /proc, of other pid namespaces: the opener registry
 * (opener-registry.ts) covers agentbus processes there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface OpenHandle {
  /** The process holding the file. */
  readonly pid: number;
  /** Its command line (with lsof: the command name), for the message a person reads. */
  readonly command: string;
  /** Which of the asked-for files it holds. */
  readonly file: string;
}

/** How to look: /proc (Linux), lsof, or whichever works here (the default). */
export type OpenFilesMethod = 'proc' | 'lsof' | 'auto';

/** True when /proc/<pid>/fd can be listed here (Linux). */
export function procAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/fd`);
}

function viaProc(paths: readonly string[]): OpenHandle[] {
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

/** `lsof -F pcn`: lines `p<pid>`, `c<command>`, `n<file>`; undefined when lsof cannot be run. */
function viaLsof(paths: readonly string[]): OpenHandle[] | undefined {
  const existing = paths.filter((p) => existsSync(p));
  if (existing.length === 0) return [];
  const run = spawnSync('lsof', ['-w', '-F', 'pcn', '--', ...existing], { encoding: 'utf8', timeout: 20_000 });
  // lsof exits 1 both when it finds nothing and on some errors; output decides.
  if (run.error !== undefined || (run.status !== 0 && run.status !== 1)) return undefined;
  const found = new Map<number, OpenHandle>();
  let pid = 0;
  let command = '';
  for (const line of run.stdout.split('\n')) {
    const value = line.slice(1);
    if (line.startsWith('p')) {
      pid = Number(value);
      command = '';
    } else if (line.startsWith('c')) {
      command = value;
    } else if (line.startsWith('n') && pid > 0 && pid !== process.pid && !found.has(pid)) {
      found.set(pid, { pid, command, file: value });
    }
  }
  return [...found.values()];
}

/**
 * Processes other than this one holding any of `paths` open; undefined when
 * this system offers no way to tell (no /proc and no lsof).
 */
export function processesHolding(paths: readonly string[], method: OpenFilesMethod = 'auto'): OpenHandle[] | undefined {
  if (method === 'proc' || (method === 'auto' && procAvailable())) return viaProc(paths);
  return viaLsof(paths);
}
