/**
 * The moment an `agentbus mcp` process must stop using its database: one of
 * the files every process shares was deleted or replaced under it (see
 * src/db/storage/shared-file-guard.ts). From then on every tool call, the heartbeat,
 * the tick and any waiting receive get the same error, the log and the
 * harness's stderr are told once, and shutdown neither writes nor closes the
 * connection (a close could checkpoint from a stale WAL index and delete the WAL).
 */
import type { Writable } from 'node:stream';
import type { ChangeWaiter } from '../bus/change-waiter.js';
import type { DbError } from '../db/contract/db-error.js';
import { SharedFileGuard } from '../db/storage/shared-file-guard.js';
import type { Logger } from '../log.js';

export interface StorageStop {
  /** Starts watching the database at `dbPath`; call it right after opening, once. Before it, check() has nothing to object to. */
  start(dbPath: string): void;
  /** Undefined while the database may be used; the error to answer with once it must not. Sticky. */
  check(): DbError | undefined;
  /** True once check() has objected. */
  readonly stopped: boolean;
  /** `waiter` whose waits end with check()'s error once it objects, so a waiting receive never writes after it. */
  guard(waiter: ChangeWaiter): ChangeWaiter;
}

/**
 * The stop for one process. It exists before the database opens (the tools,
 * and the waiter they hold, are built first: run-mcp.ts answers the client
 * meanwhile); the guard itself starts with start().
 */
export function createStorageStop(log: Logger, stderr: Writable | undefined): StorageStop {
  let files: SharedFileGuard | undefined;
  let stopped: DbError | undefined;
  const check = (): DbError | undefined => {
    if (stopped !== undefined || files === undefined) return stopped;
    stopped = files.check();
    if (stopped !== undefined) {
      log.error('stopped using the database', { error: stopped.message });
      stderr?.write(`agentbus: ${stopped.message}\n`);
    }
    return stopped;
  };
  return {
    start(dbPath) {
      files ??= SharedFileGuard.start(dbPath);
    },
    check,
    get stopped() {
      return stopped !== undefined;
    },
    guard: (waiter) => ({
      watchName: (name) => waiter.watchName?.(name),
      async waitForChange(maxMs, signal, name) {
        await waiter.waitForChange(maxMs, signal, name);
        const refused = check();
        if (refused !== undefined) throw refused;
      },
      close: () => waiter.close(),
    }),
  };
}
