/**
 * The bus side of one `agentbus mcp` process: data directory, log, tools,
 * database (opened again until it works: retried-open.ts), heartbeat and
 * maintenance timers, the inbox monitor (inbox file
 * and channel push), and their clean stop
 * (maintenance and embedding work finished, the lease and this process's names
 * released). run-mcp.ts imports this module only after it has answered the
 * client's first message, so none of it is loaded, let alone run, before that.
 */
import { randomUUID } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import type { BusContext } from '../bus/bus-context.js';
import { createChangeWaiter, type ChangeFeed } from '../bus/change-waiter.js';
import { heartbeat, HEARTBEAT_INTERVAL_MS, releaseSessions } from '../bus/identity.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { DbError } from '../db/contract/db-error.js';
import type { Database } from '../db/contract/database.js';
import { openDatabase, prepareDataDir, type OpenedDatabase } from '../db/open/open-database.js';
import { currentProcess } from '../db/processes/process-identity.js';
import { embeddingPassSettled, embeddingPassStep } from '../embeddings/embedding-pass.js';
import { createLateLogger, type LateLogger } from '../late-logger.js';
import { createFileLogger, type Logger } from '../log.js';
import { limitRepeats } from '../log-repeats.js';
import { ancestors, harnessProcess } from '../harness/ancestry.js';
import { createMaintenance } from '../maintenance/tick.js';
import type { ChannelNotification } from './channel-push.js';
import { createInboxMonitor, type InboxMonitor } from './inbox-monitor.js';
import { openFailureError, openFailureLine } from './open-failure.js';
import { retriedOpen } from './retried-open.js';
import { createStorageStop, type StorageStop } from './storage-stop.js';
import type { ToolDefinition } from './tool-definition.js';
import type { ToolServices } from './tools/all-tools.js';

export interface BusProcessOptions {
  readonly config: Config;
  readonly clock: Clock;
  /** The working directory; its basename is the default register context. */
  readonly cwd: string;
  /** Builds the tool list from the process's shared services. */
  readonly tools: (services: ToolServices) => readonly ToolDefinition[] | Promise<readonly ToolDefinition[]>;
  /** Sends a Claude Code channel event to the client; absent when push is off. */
  readonly push?: (notification: ChannelNotification) => void;
  /** The harness's log (stderr of the process): told once when the process stops using the database. */
  readonly stderr?: Writable;
}

export interface BusProcess {
  /** The process's log (agentbus.log in the data directory, once that directory can be used). */
  readonly log: Logger;
  /** The tools, ready before the database is. */
  readonly tools: readonly ToolDefinition[];
  /** Undefined while the database may be used (and before it is open); once a shared file was replaced, the error every call answers. Sticky. */
  storageCheck(): DbError | undefined;
  /** Has the inbox monitor look again (after a tool call, before its answer); never throws, a no-op before the open. */
  afterToolCall(): void;
  /** Starts opening the database (and then the heartbeat, maintenance and the inbox monitor) without waiting; once. */
  start(): void;
  /**
   * The bus once the database is open. While it cannot be opened, rejects with
   * the tool error saying why (open-failure.ts), and tries again first unless
   * it tried in the last OPEN_RETRY_GAP_MS.
   */
  context(): Promise<BusContext>;
  /** True when the database never opened and at least one attempt failed (the process then exits 1). */
  readonly failing: boolean;
  /** Stops what the open started and closes the database and the log. */
  stop(): Promise<void>;
}

/** A tool call tries the open again only when the last attempt ended at least this long ago. */
export const OPEN_RETRY_GAP_MS = 500;
/** How often an idle server whose database cannot be opened tries again by itself. */
export const OPEN_RETRY_EVERY_MS = 10_000;

interface Running {
  readonly ctx: BusContext;
  readonly beat: NodeJS.Timeout;
  readonly maintenance: ReturnType<typeof createMaintenance>;
}

/** What the parts of one bus process share. */
interface Shared {
  readonly options: BusProcessOptions;
  readonly dataDir: string;
  /** The log file, attached once the data directory can be used. */
  readonly file: LateLogger;
  /** `file` with repeats limited: what everything logs to. */
  readonly log: Logger;
  readonly storage: StorageStop;
  readonly waiter: ChangeFeed;
}

/** The bus's database: the SQLite file in the data directory, or the PostgreSQL server a database_url names. */
async function openStore(config: Config, dataDir: string, now: () => number): Promise<Pick<OpenedDatabase, 'migrations' | 'converted'> & { db: Database }> {
  if (config.database_url !== undefined) {
    // A file of its own in the bundle (scripts/build.js, ON_DEMAND): a SQLite user's server never loads it.
    const { openPostgresBus } = await import('../db/open/open-postgres.js');
    return openPostgresBus({ ...config, database_url: config.database_url }, now);
  }
  return openDatabase({ dataDir, driver: config.driver, driverSource: config.driverSource, convertWhenOnlyPortable: true, now });
}

/** Opens the database once (retried-open.ts calls it again after a failure) and logs the start. */
async function openBus(shared: Shared): Promise<BusContext> {
  const { options, dataDir, file, log, storage, waiter } = shared;
  const { config } = options;
  prepareDataDir(dataDir);
  if (!file.attached) file.attach(createFileLogger(dataDir, config.log_level));
  const { db, migrations, converted } = await openStore(config, dataDir, () => options.clock.now());
  try {
    // A server database has no files of its own here to guard.
    if (db.capabilities.lockProtocol !== 'server') storage.start(db.path);
  } catch (error) {
    db.close();
    throw error;
  }
  // On a 'notify' engine, commits of every machine wake this process's waits (none on a bell-file one).
  waiter.listenTo(db.wakeSource);
  log.info('mcp start', {
    pid: process.pid,
    driver: db.capabilities.name,
    sqlite: db.capabilities.sqliteVersion,
    schema: migrations.version,
    migrated: migrations.applied.join(',') || null,
    converted: converted === undefined ? null : `${converted.from} -> ${converted.to}`,
  });
  return {
    db,
    config,
    clock: options.clock,
    log,
    owner: randomUUID(),
    processIdentity: currentProcess(),
    defaultContext: basename(options.cwd) || 'unknown',
    workingDirectory: options.cwd,
    rateLimiter: new RateLimiter(config),
    announce: (addressees) => waiter.announce(addressees),
  };
}

// The heartbeat keeps this process's names live for observers that cannot
// see this process; a failure (busy, reset) is retried on the next beat, and
// a lost name surfaces as not_registered. Node's timers run on the
// monotonic clock, so a wall-clock jump neither bunches nor stalls beats.
function startRunning(shared: Shared, ctx: BusContext): Running {
  const { options, log, storage } = shared;
  const beat = setInterval(() => {
    if (storage.check() !== undefined) return;
    try {
      heartbeat(ctx);
    } catch (error) {
      log.warn('heartbeat failed', { error: (error as Error).message });
    }
  }, HEARTBEAT_INTERVAL_MS);
  beat.unref();
  const maintenance = createMaintenance({
    db: ctx.db,
    config: options.config,
    clock: options.clock,
    log,
    owner: ctx.owner,
    processIdentity: ctx.processIdentity,
    steps: { embeddingPass: embeddingPassStep(ctx) },
    mayWrite: () => storage.check() === undefined,
  });
  maintenance.start();
  return { ctx, beat, maintenance };
}

function startInbox(shared: Shared, ctx: BusContext): InboxMonitor {
  const { options, dataDir, log, storage, waiter } = shared;
  const send = options.push;
  const push =
    send === undefined
      ? undefined
      : (notification: ChannelNotification): void => {
          const { meta } = notification.params;
          log.debug('channel event sent', { as: meta.as, channel: meta.channel, seq: meta.seq, count: meta.count, ...(meta.direct === undefined ? {} : { direct: meta.direct }) });
          send(notification);
        };
  const harness = harnessProcess(ancestors());
  log.info('harness', { harness: harness === undefined ? null : `${harness.command} pid ${harness.identity.pid}` });
  return createInboxMonitor({
    ctx,
    dataDir,
    feed: waiter,
    server: currentProcess(),
    harness: harness?.identity,
    ...(push === undefined ? {} : { push }),
    usable: () => storage.check() === undefined,
  });
}

/** Stops the timers, finishes maintenance and embedding work, releases the names and closes the database (what a replaced shared file allows of it). */
async function stopRunning(shared: Shared, running: Running): Promise<void> {
  const { log, storage } = shared;
  const { ctx, beat, maintenance } = running;
  clearInterval(beat);
  // Stopping hands the lease back, a write: not after the database's shared files were replaced.
  if (!storage.stopped) await maintenance.stop();
  await embeddingPassSettled(ctx.db);
  try {
    if (!storage.stopped) releaseSessions(ctx);
  } catch (error) {
    // Busy or reset: observers then see this process gone (or, from another pid namespace, its heartbeat stop).
    log.warn('releasing sessions failed', { error: (error as Error).message });
  }
  // Closing may checkpoint and delete the WAL when this process believes it is the last one; with the
  // shared files replaced it cannot know, so it leaves the database as it is and lets process exit release it.
  if (!storage.stopped) ctx.db.close();
  log.info('mcp stop', { pid: process.pid });
}

/** The open, tried again until it works; each distinct reason it fails for is logged, and told to the harness's log once. */
function retriedBusOpen(shared: Shared, attempt: () => Promise<Running>) {
  const { options, log } = shared;
  return retriedOpen<Running>({
    attempt,
    failed(error, changed) {
      const line = openFailureLine(error);
      log.warn('database unavailable', { error: line });
      // The harness's log gets each distinct reason once, as the process's exit used to give it.
      if (changed) options.stderr?.write(`agentbus: ${line}\n`);
    },
    recovered: () => log.info('database available again', { pid: process.pid }),
    minGapMs: OPEN_RETRY_GAP_MS,
    everyMs: OPEN_RETRY_EVERY_MS,
    now: () => performance.now(),
  });
}

/**
 * Prepares the log and the tools; the data directory is checked and the
 * database opened by start(), and again by each attempt after a failure
 * (retried-open.ts): a cause a person removes (a mode, a full disk, a
 * restored file) or one that ends by itself (the other Node's session) needs
 * no restart of the harness session.
 */
export async function createBusProcess(options: BusProcessOptions): Promise<BusProcess> {
  const dataDir = resolve(options.config.data_directory);
  const file = createLateLogger();
  // A failure every call meets (damaged file, full disk) is logged once a minute with a count, not once per call.
  const log = limitRepeats(file);
  // A shared file deleted or replaced under this process stops its use of the database for good.
  const storage = createStorageStop(log, options.stderr);
  const waiter = createChangeWaiter(dataDir);
  const shared: Shared = { options, dataDir, file, log, storage, waiter };
  // The monitor needs the open database; receive tells it about waits from the start.
  let inbox: InboxMonitor | undefined;
  const receiving = { enterReceive: (name: string) => inbox?.enterReceive(name) ?? (() => undefined) };
  let tools: readonly ToolDefinition[];
  try {
    tools = await options.tools({ waiter: storage.guard(waiter), inbox: receiving });
  } catch (error) {
    waiter.close();
    throw error;
  }
  const open = retriedBusOpen(shared, async () => {
    const ctx = await openBus(shared);
    const running = startRunning(shared, ctx);
    inbox = startInbox(shared, ctx);
    return running;
  });

  return {
    log,
    tools,
    afterToolCall: () => inbox?.refresh(),
    storageCheck: storage.check,
    start: () => open.start(),
    async context() {
      try {
        return (await open.get()).ctx;
      } catch (error) {
        throw openFailureError(error) ?? error;
      }
    },
    get failing() {
      return open.failing;
    },
    async stop() {
      const running = await open.stop();
      inbox?.close();
      waiter.close();
      if (running !== undefined) await stopRunning(shared, running);
      await log.close();
    },
  };
}
