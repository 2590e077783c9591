/**
 * The maintenance tick: every `cleanup_interval_seconds` each mcp process
 * tries the lease; the holder runs the steps in the order of runSteps (the
 * list in docs/architecture.md, "Behaviour, briefly": Maintenance tick), each in
 * chunks of at most 1,000 rows per transaction, stopping at a deadline of
 * half the interval on the monotonic clock (the next tick resumes: every
 * step is idempotent and starts from whatever is left). Where the text index
 * is FTS5's, steps that delete messages merge it after each chunk, and
 * `fts_merge` merges what sends added since the last tick
 * (src/maintenance/fts-merge.ts says why); a tsvector's GIN index has no
 * segments to merge.
 */
import { deleteDeadReservations } from '../liveness/reservations-live.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { ProcessIdentity } from '../db/processes/process-identity.js';
import type { Logger } from '../log.js';
import { capacityUsage, evictForCapacity, type CapacityUsage } from './capacity.js';
import { clearCapacityNotice, readCapacityNotice, setCapacityNotice } from './capacity-notice.js';
import { DEFAULT_LOCK_TARGET_MS, runChunks, type Chunk } from './chunks.js';
import { mergeFtsLevels, mergesFtsSegments } from './fts-merge.js';
import { acquireLease, releaseLease } from './lease.js';
import { retentionChunk } from './retention.js';
import { deleteExpiredReceipts, deleteIdleSubscriptions, deleteStaleSessions } from './stale-rows.js';
import { emptyStep, type StepName, type StepReport } from './step-report.js';
import { purgeTombstones } from './tombstones.js';
import { vacuumStep } from './vacuum.js';

/** Steps supplied by other parts of agentbus. */
export interface MaintenanceSteps {
  /**
   * The embedding pass, run last. `deadlineMs` is the tick's deadline on the
   * maintenance timer (the clock's monotonic time by default); the pass must return by then.
   */
  readonly embeddingPass?: (deadlineMs: number) => Promise<void>;
}

export interface MaintenanceOptions {
  /** The open database. */
  readonly db: Database;
  /** The validated configuration. */
  readonly config: Config;
  /** Time for row ages and the lease; every cutoff is computed from it. */
  readonly clock: Clock;
  /** This process's identity, written into the lease so others can take it the moment this process dies. */
  readonly processIdentity: ProcessIdentity | undefined;
  /** Diagnostics; the tick logs counts, never row contents. */
  readonly log: Logger;
  /** This process's owner token, written into the lease. */
  readonly owner: string;
  /** Optional steps from other modules. */
  readonly steps?: MaintenanceSteps;
  /** Monotonic ms for the tick deadline; defaults to clock.monotonic. Tests pass a stepping timer. */
  readonly timer?: () => number;
  /** Adaptive chunk sizing aims each transaction at this many ms; Infinity keeps chunks at 1,000 rows. */
  readonly lockTargetMs?: number;
  /** Asked before each timed tick; false skips it (the process has stopped using the database). */
  readonly mayWrite?: () => boolean;
}

export interface TickReport {
  /** False when another process holds the lease; nothing else was done. */
  readonly leased: boolean;
  /** Clock time the tick started at. */
  readonly startedAt: number;
  /** Duration of the tick on the timer. */
  readonly durationMs: number;
  /** True when the deadline stopped the tick before every step finished. */
  readonly deadlineReached: boolean;
  /** Each step in order; empty when not leased. */
  readonly steps: readonly StepReport[];
  /** The longest single write transaction in the tick, in ms. */
  readonly maxLockMs: number;
  /** Usage after the tick (undefined when not leased). */
  readonly usage: CapacityUsage | undefined;
  /** Whether the capacity notice is set after the tick. */
  readonly capacityNotice: boolean;
}

export interface Maintenance {
  /** Runs one tick now (taking the lease first); never overlaps a running tick of this instance. */
  runTick(): Promise<TickReport>;
  /** Starts ticking every `cleanup_interval_seconds`; the timer does not keep the process alive. Idempotent. */
  start(): void;
  /** Stops ticking, waits for a running tick and releases the lease. Idempotent. */
  stop(): Promise<void>;
}

function errorText(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  return `${typeof e?.code === 'string' ? `${e.code}: ` : ''}${typeof e?.message === 'string' ? e.message : String(error)}`;
}

/** One leased tick as its steps see it. */
interface TickRun {
  readonly options: MaintenanceOptions;
  /** Clock time the tick started at: every row age is measured from it. */
  readonly now: number;
  /** The tick's deadline on the timer. */
  readonly deadline: number;
  readonly pastDeadline: () => boolean;
  readonly lockTargetMs: number;
  /** Each step's report, in order, as the steps run. */
  readonly steps: StepReport[];
}

/** The report of a tick that found the lease held by another process. */
function notLeasedReport(db: Database, startedAt: number, durationMs: number): TickReport {
  return { leased: false, startedAt, durationMs, deadlineReached: false, steps: [], maxLockMs: 0, usage: undefined, capacityNotice: readCapacityNotice(db) !== undefined };
}

/** Runs one step, skipped once the deadline passed; a failure is recorded in its report and logged, and the tick goes on. */
async function runStep(run: TickRun, name: StepName, body: (report: StepReport) => Promise<void>): Promise<void> {
  const report = emptyStep(name);
  run.steps.push(report);
  if (run.pastDeadline()) {
    report.skipped = true;
    report.cutShort = true;
    return;
  }
  try {
    await body(report);
  } catch (error) {
    report.error = errorText(error);
    run.options.log.warn('maintenance step failed', { step: name, error: report.error });
  }
}

/** Capacity: evicts towards the target when over budget, then sets or clears the notice by what is left. */
async function capacityStep(run: TickRun, report: StepReport): Promise<void> {
  const { db, config } = run.options;
  const before = capacityUsage(db, config);
  if (before.usedBytes > before.budgetBytes) {
    const done = () => capacityUsage(db, config).usedBytes < before.targetBytes;
    await evictForCapacity(db, { pastDeadline: run.pastDeadline, lockTargetMs: run.lockTargetMs, done }, report);
  }
  const after = capacityUsage(db, config);
  if (after.usedBytes < after.budgetBytes) {
    db.transaction(() => clearCapacityNotice(db));
  } else if (!report.cutShort) {
    // Everything evictable is gone and usage is still over: only memories are left.
    db.transaction(() => setCapacityNotice(db, config, run.now));
  }
}

/**
 * The steps, in their order: rows that point at sessions and messages go
 * first, then the messages (retention, tombstones, capacity), then the index
 * and the file they leave behind, then the embedding pass.
 */
async function runSteps(run: TickRun): Promise<void> {
  const { db, config, clock, owner } = run.options;
  const { now, pastDeadline, lockTargetMs } = run;
  const observer = { clock, owner };
  const retentionMs = config.receipt_retention_minutes * 60_000;
  const chunked = (chunk: Chunk) => (report: StepReport) => runChunks(db, chunk, { pastDeadline, lockTargetMs }, report);
  // Each chunk of deleted messages adds an FTS5 segment of delete markers; merging as they come keeps every level under crisismerge.
  const merges = mergesFtsSegments(db);
  const chunkedWithMerge = (chunk: Chunk) => (report: StepReport) =>
    runChunks(db, chunk, { pastDeadline, lockTargetMs, afterChunk: merges ? () => mergeFtsLevels(db, pastDeadline, report) : undefined }, report);

  await runStep(run, 'stale_sessions', chunked((limit) => deleteStaleSessions(db, observer, limit)));
  await runStep(run, 'reservations', chunked((limit) => deleteDeadReservations(db, observer, limit)));
  await runStep(run, 'expired_receipts', chunked((limit) => deleteExpiredReceipts(db, observer, retentionMs, limit)));
  await runStep(run, 'idle_subscriptions', chunked((limit) => deleteIdleSubscriptions(db, now, config.cursor_idle_hours, limit)));
  await runStep(run, 'retention', chunkedWithMerge(retentionChunk(db, now, config.message_retention_hours)));
  await runStep(run, 'tombstones', chunkedWithMerge((limit) => purgeTombstones(db, now, config.tombstone_min_hours, limit)));
  await runStep(run, 'capacity', (report) => capacityStep(run, report));
  // FTS5's segments and SQLite's free pages are SQLite's own; PostgreSQL's autovacuum keeps its tables and GIN index.
  if (merges) await runStep(run, 'fts_merge', (report) => mergeFtsLevels(db, pastDeadline, report));
  if (db.capabilities.sizeOf === 'pages') await runStep(run, 'vacuum', (report) => vacuumStep(db, pastDeadline, report));
  const embeddingPass = run.options.steps?.embeddingPass;
  if (embeddingPass !== undefined) await runStep(run, 'embeddings', () => embeddingPass(run.deadline));
}

/** Logs the tick: at info when it did or missed something, at debug when it found nothing to do (the normal case). */
function logTick(log: Logger, report: TickReport): void {
  const { steps } = report;
  const busy = steps.some((s) => s.rows > 0 || s.error !== undefined || s.cutShort);
  const fields = {
    durationMs: Math.round(report.durationMs),
    deadlineReached: report.deadlineReached,
    maxLockMs: Math.round(report.maxLockMs),
    ...Object.fromEntries(steps.map((s) => [s.name, s.rows])),
    ftsMerges: steps.reduce((n, s) => n + s.ftsMerges, 0),
  };
  if (busy) log.info('maintenance tick', fields);
  else log.debug('maintenance tick', fields);
}

export function createMaintenance(options: MaintenanceOptions): Maintenance {
  const { db, config, clock, log, owner } = options;
  const timer = options.timer ?? (() => clock.monotonic());
  const lockTargetMs = options.lockTargetMs ?? DEFAULT_LOCK_TARGET_MS;
  const intervalMs = config.cleanup_interval_seconds * 1000;
  let running: Promise<TickReport> | undefined;
  let interval: NodeJS.Timeout | undefined;

  async function tick(): Promise<TickReport> {
    const started = timer();
    const now = clock.now();
    if (!acquireLease(db, { owner, process: options.processIdentity, clock }, 2 * intervalMs)) return notLeasedReport(db, now, timer() - started);
    const deadline = started + intervalMs / 2;
    const run: TickRun = { options, now, deadline, pastDeadline: () => timer() >= deadline, lockTargetMs, steps: [] };
    await runSteps(run);
    const { steps } = run;
    const report: TickReport = {
      leased: true,
      startedAt: now,
      durationMs: timer() - started,
      deadlineReached: steps.some((s) => s.cutShort),
      steps,
      maxLockMs: Math.max(0, ...steps.map((s) => s.maxLockMs)),
      usage: capacityUsage(db, config),
      capacityNotice: readCapacityNotice(db) !== undefined,
    };
    logTick(log, report);
    return report;
  }

  function runTick(): Promise<TickReport> {
    running ??= tick().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    runTick,
    start() {
      if (interval !== undefined) return;
      interval = setInterval(() => {
        if (running !== undefined || options.mayWrite?.() === false) return;
        runTick().catch((error: unknown) => log.warn('maintenance tick failed', { error: errorText(error) }));
      }, intervalMs);
      interval.unref();
    },
    async stop() {
      if (interval !== undefined) clearInterval(interval);
      interval = undefined;
      await running?.catch(() => undefined);
      try {
        releaseLease(db, owner);
      } catch (error) {
        log.warn('maintenance lease release failed', { error: errorText(error) });
      }
    },
  };
}
