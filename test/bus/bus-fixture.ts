/**
 * A bus on a real database file for in-process tests. Each `process()` is a
 * separate connection with its own owner token, as two agentbus processes
 * would be; all share one test clock that tests move by hand. A process's
 * identity is, unless given, one from another realm (as a container's
 * process would be): nobody can judge it by pid, so its sessions are judged
 * by their heartbeats on the shared monotonic clock.
 */
import { afterEach } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { BusError } from '../../src/bus/bus-error.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { createMemoryLogger } from '../../src/log.js';
import { foreignProcess } from '../support/process-identities.js';
import { TestClock } from '../support/test-clock.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

export { TestClock } from '../support/test-clock.js';

const open: Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

export interface Bus {
  /** The data directory holding the database. */
  readonly dir: string;
  /** The configuration every process of this bus uses. */
  readonly config: Config;
  /** The clock every process of this bus shares. */
  readonly clock: TestClock;
  /** A new process: its own connection and owner token. */
  process(owner: string, extra?: Partial<BusContext>): Promise<BusContext>;
}

export async function createBus(overrides: Partial<Config> = {}): Promise<Bus> {
  const dir = tempDir();
  const config: Config = { ...loadConfig({ env: { AGENTBUS_DATA_DIR: dir }, homeDir: dir, cwd: dir }), ...overrides };
  const clock = new TestClock();
  return {
    dir,
    config,
    clock,
    async process(owner, extra = {}) {
      const { db } = await openTestDatabase(dir);
      open.push(db);
      return { db, config, clock, log: createMemoryLogger(), owner, processIdentity: foreignProcess(), defaultContext: 'repo', ...extra };
    },
  };
}

/** The BusError a call throws (sync or async); fails if it succeeds or throws something else. */
export async function busError(fn: () => unknown): Promise<BusError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof BusError) return error;
    throw error;
  }
  throw new Error('expected a BusError, but the call succeeded');
}
