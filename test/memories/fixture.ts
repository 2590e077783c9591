/**
 * A bus over a real database file for memory, search and embedding tests:
 * default configuration plus overrides, a test clock, a memory logger, and
 * helpers that set up registered senders, channels and memories.
 */
import * as v from 'valibot';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChannel } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { ConfigFileSchema, type Config } from '../../src/config.js';
import { embeddingPassSettled } from '../../src/embeddings/embedding-pass.js';
import { currentProcess } from '../../src/db/process-identity.js';
import { createMemoryLogger, type LogEntry } from '../../src/log.js';
import { TestClock } from '../support/test-clock.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

export interface Fixture {
  readonly ctx: BusContext;
  readonly clock: TestClock;
  /** What the bus logged. */
  readonly entries: LogEntry[];
  /** Waits for background embedding passes, then closes the database. */
  close(): Promise<void>;
}

export async function busFixture(overrides: Partial<Config> = {}): Promise<Fixture> {
  const dir = tempDir();
  const { db } = await openTestDatabase(dir);
  const clock = new TestClock();
  const log = createMemoryLogger('debug');
  const config: Config = {
    ...v.parse(ConfigFileSchema, {}),
    data_directory: dir,
    driver: 'auto',
    driverSource: { kind: 'default' },
    embedding_api_key_file: undefined,
    configPath: `${dir}/config.json`,
    configFileFound: false,
    ...overrides,
  };
  const ctx: BusContext = { db, config, clock, log, owner: 'test-owner', processIdentity: currentProcess(), defaultContext: 'repo' };
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

/**
 * Stores a message row directly, as send does: on a memory channel it is
 * revision 1 of a memory whose id is its own seq. Returns the seq.
 */
export function insertMessage(
  ctx: BusContext,
  row: { channel: string; sender: string; content: string; memory?: boolean; reply_to?: number; created_at?: number; context?: string },
): number {
  const { db } = ctx;
  return db.transaction(() => {
    const seq = db.run(
      `INSERT INTO messages (channel, sender, context, created_at, type, content, reply_to, memory_id, revision, bytes)
       VALUES (?, ?, ?, ?, 'text', ?, ?, ?, ?, ?)`,
      [
        row.channel,
        row.sender,
        row.context ?? 'repo',
        row.created_at ?? ctx.clock.now(),
        row.content,
        row.reply_to ?? null,
        row.memory === true ? 0 : null,
        row.memory === true ? 1 : null,
        Buffer.byteLength(row.content),
      ],
    ).lastInsertRowid;
    if (row.memory === true) db.run('UPDATE messages SET memory_id = seq WHERE seq = ?', [seq]);
    return seq;
  });
}

/** Revision rows of a memory, oldest first. */
export function revisions(ctx: BusContext, memoryId: number): { seq: number; revision: number; tombstone: number; content: string; sender: string }[] {
  return ctx.db.all('SELECT seq, revision, tombstone, content, sender FROM messages WHERE memory_id = ? ORDER BY revision', [memoryId]);
}

/** Seqs that have a vector for `model`. */
export function embeddedSeqs(ctx: BusContext, model: string): number[] {
  return ctx.db.all<{ seq: number }>('SELECT seq FROM embeddings WHERE model = ? ORDER BY seq', [model]).map((r) => r.seq);
}

/** The error thrown by `fn`, for asserting its `code`. */
export async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, got none');
}
