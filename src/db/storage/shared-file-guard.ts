/**
 * Noticing that a file every process of a database shares was deleted or
 * replaced while this process has the database open: the database itself,
 * `-wal`, `-shm` and the portable protocol's `-locks`. Processes keep using the
 * file they opened while processes started afterwards create a new one; the
 * two groups then no longer see each other's WAL index or locks, and commits
 * are lost without any error. SQLite and the lock protocol remove these files
 * only when the last connection closes, never while another has the database
 * open, so a change seen from an open connection is always outside meddling.
 *
 * The check stats the paths (never opens them: closing any descriptor of a
 * file drops this process's POSIX locks on it, which SQLite relies on) and
 * compares device and inode with what was there when the guard started. A few
 * microseconds, cheap enough to run before every tool call.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { DbError } from '../contract/db-error.js';
import { lockTablePath } from '../lock-records/portable-lock-files.js';

/** The files beside (and including) a database that its processes share while it is open. */
export function sharedFiles(dbPath: string): string[] {
  return [dbPath, `${dbPath}-wal`, `${dbPath}-shm`, lockTablePath(dbPath)];
}

interface Identity {
  readonly dev: number;
  readonly ino: number;
}

function identityOf(path: string): Identity | undefined {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined ? undefined : { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

export class SharedFileGuard {
  readonly #dbPath: string;
  readonly #known = new Map<string, Identity>();
  #tripped: DbError | undefined;

  private constructor(dbPath: string) {
    this.#dbPath = dbPath;
  }

  /** Starts guarding the shared files of `dbPath` as they are now; call it right after opening the database. */
  static start(dbPath: string): SharedFileGuard {
    const guard = new SharedFileGuard(dbPath);
    guard.#learn(sharedFiles(dbPath));
    return guard;
  }

  /** Records those of `paths` that exist now and were not known yet. */
  #learn(paths: readonly string[]): void {
    for (const path of paths) {
      if (this.#known.has(path)) continue;
      const id = identityOf(path);
      if (id !== undefined) this.#known.set(path, id);
    }
  }

  /**
   * Undefined while every known shared file is still the one this process
   * opened; otherwise a DbError `replaced` naming the file and what to do.
   * Once a change is seen the answer stays, even if the file reappears.
   */
  check(): DbError | undefined {
    if (this.#tripped !== undefined) return this.#tripped;
    for (const [path, id] of this.#known) {
      const now = identityOf(path);
      if (now !== undefined && now.dev === id.dev && now.ino === id.ino) continue;
      const what = now === undefined ? 'was deleted' : 'was replaced by another file';
      this.#tripped = new DbError(
        'replaced',
        `${path} ${what} while this agentbus process had the database open. Processes started since then no longer share locks or the WAL index with this one, and commits would be lost, so this process has stopped using the database. ` +
          `Restart this agent session (its \`agentbus mcp\` process) to open the database afresh; run \`agentbus doctor\` once every agentbus process has been restarted. ` +
          `Never delete or move ${basename(this.#dbPath)}, -wal, -shm or -locks while agentbus runs.`,
      );
      return this.#tripped;
    }
    // SQLite creates -wal and -shm at the first read in WAL mode; learn them if they came later.
    // (-locks is not learnt late: on a posix database it is not ours.)
    if (!this.#known.has(`${this.#dbPath}-shm`) || !this.#known.has(`${this.#dbPath}-wal`)) {
      this.#learn([`${this.#dbPath}-wal`, `${this.#dbPath}-shm`]);
    }
    return undefined;
  }
}
