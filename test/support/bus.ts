/**
 * A bus over a real database file for in-process tests, on the test driver,
 * with a test clock and the test configuration plus overrides.
 * - `createBus`: several processes, each `process()` its own connection and
 *   owner token (as two agentbus processes would be), one shared clock;
 *   connections close after each test. A process's identity is, unless
 *   given, one from another realm (as a container's process would be):
 *   nobody can judge it by pid, so its sessions are judged by their
 *   heartbeats on the shared monotonic clock.
 * - `busFixture`: one process (this one, by identity) whose log is kept for
 *   assertions; `close()` waits for background embedding passes first.
 */
import { afterEach } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChannel } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/contract/database.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { embeddingPassSettled } from '../../src/embeddings/embedding-pass.js';
import { createMemoryLogger, type LogEntry } from '../../src/log.js';
import { foreignProcess } from './process-identities.js';
import { TestClock } from './test-clock.js';
import { testConfig } from './test-config.js';
import { openTestDatabase, tempDir } from './test-driver.js';

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
  const config = testConfig(dir, overrides);
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

export interface Fixture {
  /** The one process's context. */
  readonly ctx: BusContext;
  /** The clock of `ctx`. */
  readonly clock: TestClock;
  /** What the bus logged (debug and up). */
  readonly entries: LogEntry[];
  /** Waits for background embedding passes, then closes the database. */
  close(): Promise<void>;
}

export async function busFixture(overrides: Partial<Config> = {}): Promise<Fixture> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  const clock = new TestClock();
  const log = createMemoryLogger('debug');
  const ctx: BusContext = { db, config: testConfig(dir, overrides), clock, log, owner: 'test-owner', processIdentity: currentProcess(), defaultContext: 'repo' };
  return {
    ctx,
    clock,
    entries: log.entries,
    close: async () => {
      await embeddingPassSettled(db);
      db.close();
    },
  };
}

/** The same database seen with another configuration (another process, or a restart after a config change). */
export function withConfig(ctx: BusContext, overrides: Partial<Config>): BusContext {
  return { ...ctx, config: { ...ctx.config, ...overrides } };
}

/** Registers `name` and returns the display name to pass as `as`. */
export function registerAs(ctx: BusContext, name: string, context?: string): string {
  return register(ctx, context === undefined ? { name } : { name, context }).display_name;
}

/** Creates a channel as `as`. */
export function channel(ctx: BusContext, as: string, name: string, kind: 'ordinary' | 'memory'): void {
  createChannel(ctx, { as, name, kind });
}
