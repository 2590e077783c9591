/**
 * The opener registry: every connection agentbus opens on a database leaves
 * an entry in `<db>.openers/` for as long as it is open, whatever its driver.
 * It exists because the two lock protocols cannot see each other: a Node 20
 * process (wasm only) cannot test the POSIX locks a native connection holds,
 * and outside Linux it cannot list other processes' open files either. An
 * entry names its owner (pid, start time, realm: process-identity.ts), so a
 * crashed owner's entry is recognised as dead and ignored.
 *
 * Entries are added under the set-up lock (open-database.ts), and a
 * conversion or restore looks at them under the same lock, so a connection
 * is either registered before the check or opens after the change.
 *
 * Entry name: `<identity>#<n>` (n counts this process's connections); body:
 * JSON `{"protocol", "command"}` for the message that names holders.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LockProtocol } from '../contract/driver.js';
import { currentProcess, formatProcessIdentity, judgeProcess, parseProcessIdentity, type Liveness, type ProcessIdentity } from '../processes/process-identity.js';

/** The registry directory beside a database. */
export function openerRegistryDir(dbPath: string): string {
  return `${dbPath}.openers`;
}

export interface Opener {
  /** The entry's path. */
  readonly path: string;
  /** The process holding the connection. */
  readonly owner: ProcessIdentity;
  /** Whether that process still runs; `unknown` must be treated as running. */
  readonly liveness: Liveness;
  /** The lock protocol the connection speaks, when the entry says. */
  readonly protocol: LockProtocol | undefined;
  /** The owner's command line, when the entry says. */
  readonly command: string;
}

let counter = 0;

/**
 * Adds this connection's entry; returns the function that removes it (call
 * it when the connection closes). Call under the set-up lock.
 */
export function registerOpener(dbPath: string, protocol: LockProtocol): () => void {
  const dir = openerRegistryDir(dbPath);
  const name = `${formatProcessIdentity(currentProcess())}#${++counter}`;
  const body = JSON.stringify({ protocol, command: process.argv.join(' ') });
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // Written aside and renamed, so a reader never sees half a body.
      writeFileSync(join(dir, `.${name}.tmp`), body, { mode: 0o600 });
      renameSync(join(dir, `.${name}.tmp`), join(dir, name));
      break;
    } catch (error) {
      // A closer removed the empty directory between mkdir and write: make it again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
    }
  }
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // already removed (a reset of the data directory)
    }
    try {
      rmdirSync(dir);
    } catch {
      // not empty: other connections are open
    }
  };
}

function parseBody(text: string): { protocol: LockProtocol | undefined; command: string } {
  try {
    const body = JSON.parse(text) as { protocol?: unknown; command?: unknown };
    const protocol = body.protocol === 'posix' || body.protocol === 'portable' ? body.protocol : undefined;
    return { protocol, command: typeof body.command === 'string' ? body.command : '' };
  } catch {
    return { protocol: undefined, command: '' };
  }
}

/**
 * Every entry whose owner runs or may run (`alive` or `unknown`). Entries of
 * certainly dead owners are removed on the way (names are unique, so this
 * never removes a live one). Never throws for a missing registry.
 */
export function liveOpeners(dbPath: string): Opener[] {
  const dir = openerRegistryDir(dbPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found: Opener[] = [];
  for (const name of names) {
    if (name.startsWith('.')) continue; // being written
    const owner = parseProcessIdentity(name.split('#')[0] ?? '');
    const path = join(dir, name);
    if (owner === undefined) continue;
    const liveness = judgeProcess(owner);
    if (liveness === 'dead') {
      try {
        unlinkSync(path);
      } catch {
        // removed meanwhile
      }
      continue;
    }
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // closed meanwhile
    }
    found.push({ path, owner, liveness, ...parseBody(text) });
  }
  return found;
}
