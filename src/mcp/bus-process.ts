/**
 * The bus side of one `agentbus mcp` process: data directory, log, tools,
 * database, heartbeat and maintenance timers, the inbox monitor (inbox file
 * and channel push), and their clean stop
 * (maintenance and embedding work finished, the lease and this process's names
 * released). run-mcp.ts imports this module only after it has answered the
 * client's first message, so none of it is loaded, let alone run, before that.
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Writable } from 'node:stream';
import type { BusContext } from '../bus/bus-context.js';
import { createChangeWaiter } from '../bus/change-waiter.js';
import { heartbeat, HEARTBEAT_INTERVAL_MS, releaseSessions } from '../bus/identity.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { DbError } from '../db/db-error.js';
import { openDatabase, prepareDataDir } from '../db/open-database.js';
import { currentProcess } from '../db/process-identity.js';
import { embeddingPassSettled, embeddingPassStep } from '../embeddings/embedding-pass.js';
import { createFileLogger, type Logger } from '../log.js';
import { limitRepeats } from '../log-repeats.js';
import { ancestors, harnessProcess } from '../harness/ancestry.js';
import { createMaintenance } from '../maintenance/tick.js';
import type { ChannelNotification } from './channel-push.js';
import { createInboxMonitor, type InboxMonitor } from './inbox-monitor.js';
import { createStorageStop } from './storage-stop.js';
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
  /** The process's log (agentbus.log in the data directory). */
  readonly log: Logger;
  /** The tools, ready before the database is. */
  readonly tools: readonly ToolDefinition[];
  /** Undefined while the database may be used (and before it is open); once a shared file was replaced, the error every call answers. Sticky. */
  storageCheck(): DbError | undefined;
  /** Has the inbox monitor look again (after a tool call, before its answer); never throws, a no-op before open(). */
  afterToolCall(): void;
  /** Opens the database and starts the heartbeat, maintenance and the inbox monitor; once. */
  open(): Promise<BusContext>;
  /** Stops what open() started and closes the database and the log; after a failed open, closes the log. */
  stop(): Promise<void>;
}

/** Prepares the data directory, the log and the tools; the database is opened by open(). */
export async function createBusProcess(options: BusProcessOptions): Promise<BusProcess> {
  const { config } = options;
  const dataDir = prepareDataDir(config.data_directory);
  // A failure every call meets (damaged file, full disk) is logged once a minute with a count, not once per call.
  const log = limitRepeats(createFileLogger(dataDir, config.log_level));
  // A shared file deleted or replaced under this process stops its use of the database for good.
  const storage = createStorageStop(log, options.stderr);
  const waiter = createChangeWaiter(dataDir);
  // The monitor needs the open database; receive tells it about waits from the start.
  let inbox: InboxMonitor | undefined;
  const receiving = { enterReceive: (name: string) => inbox?.enterReceive(name) ?? (() => undefined) };
  let tools: readonly ToolDefinition[];
  try {
    tools = await options.tools({ waiter: storage.guard(waiter), inbox: receiving });
  } catch (error) {
    waiter.close();
    await log.close();
    throw error;
  }
  let running: { ctx: BusContext; beat: NodeJS.Timeout; maintenance: ReturnType<typeof createMaintenance> } | undefined;

  return {
    log,
    tools,
    afterToolCall: () => inbox?.refresh(),
    storageCheck: storage.check,
    async open() {
      const { db, migrations, converted } = await openDatabase({
        dataDir,
        driver: config.driver,
        driverSource: config.driverSource,
        convertWhenOnlyPortable: true,
        now: () => options.clock.now(),
      });
      storage.start(db.path);
      log.info('mcp start', {
        pid: process.pid,
        driver: db.capabilities.name,
        sqlite: db.capabilities.sqliteVersion,
        schema: migrations.version,
        migrated: migrations.applied.join(',') || null,
        converted: converted === undefined ? null : `${converted.from} -> ${converted.to}`,
      });
      const ctx: BusContext = {
        db,
        config,
        clock: options.clock,
        log,
        owner: randomUUID(),
        processIdentity: currentProcess(),
        defaultContext: basename(options.cwd) || 'unknown',
        workingDirectory: options.cwd,
        rateLimiter: new RateLimiter(config),
        announce: () => waiter.announce(),
      };
      // The heartbeat keeps this process's names live for observers that cannot
      // see this process; a failure (busy, reset) is retried on the next beat, and
      // a lost name surfaces as not_registered. Node's timers run on the
      // monotonic clock, so a wall-clock jump neither bunches nor stalls beats.
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
        db,
        config,
        clock: options.clock,
        log,
        owner: ctx.owner,
        processIdentity: ctx.processIdentity,
        steps: { embeddingPass: embeddingPassStep(ctx) },
        mayWrite: () => storage.check() === undefined,
      });
      maintenance.start();
      const send = options.push;
      const push =
        send === undefined
          ? undefined
          : (notification: ChannelNotification): void => {
              const { meta } = notification.params;
              log.debug('channel event sent', { as: meta.as, channel: meta.channel, seq: meta.seq, count: meta.count });
              send(notification);
            };
      const harness = harnessProcess(ancestors());
      log.info('harness', { harness: harness === undefined ? null : `${harness.command} pid ${harness.identity.pid}` });
      inbox = createInboxMonitor({
        ctx,
        dataDir,
        feed: waiter,
        server: currentProcess(),
        harness: harness?.identity,
        ...(push === undefined ? {} : { push }),
        usable: () => storage.check() === undefined,
      });
      running = { ctx, beat, maintenance };
      return ctx;
    },
    async stop() {
      inbox?.close();
      waiter.close();
      if (running !== undefined) {
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
      await log.close();
    },
  };
}
