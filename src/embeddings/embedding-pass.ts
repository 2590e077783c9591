/**
 * The embedding pass: gives every live memory revision a vector under the
 * configured model. Run by the maintenance tick (a fixed number of batches
 * per run) and, best effort, right after a memory mutation commits.
 *
 * Never holds the write lock during HTTP: rows are read in one statement,
 * embedded with no transaction open, and written in one short transaction
 * that re-checks the row is still live. Every step is idempotent, so two
 * processes running passes at once only duplicate effort.
 */
import type { EmbeddingContext } from './embedding-context.js';
import type { Database } from '../db/contract/database.js';
import { isEmbeddingError, type EmbeddingError } from './embedding-error.js';
import {
  BATCH_TIMEOUT_MS,
  createEmbeddingsClient,
  EMBEDDING_BATCH_SIZE,
  embeddingSettings,
  type EmbeddingsClient,
} from './embeddings-client.js';
import { encodeVector } from './vector-codec.js';

/** Rows removed per cleanup transaction, as for every other cleanup. */
const CLEANUP_CHUNK = 1000;
/** How long a text the endpoint refused on its own is left alone before it is tried again. */
const REJECTED_RETRY_MS = 60 * 60 * 1000;
/** Requests the maintenance tick's pass may send per tick: 512 texts, bounded further by the tick deadline. */
export const EMBEDDING_BATCHES_PER_TICK = 8;
/** Batches a background pass after a mutation may send. */
const AFTER_WRITE_BATCHES = 4;
/** How long a background pass after a mutation may run. */
const AFTER_WRITE_BUDGET_MS = 120_000;

export interface EmbeddingPassOptions {
  /** Requests at most in this run (one request embeds up to 64 texts). */
  readonly maxBatches: number;
  /** Time on `timer` after which no new request starts; each request's timeout is also cut to it. */
  readonly deadlineMs: number;
  /** The clock `deadlineMs` is read on; defaults to ctx.clock.monotonic (the maintenance tick passes its own timer). */
  readonly timer?: () => number;
  /** Where the API key's environment variable is read; defaults to process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface EmbeddingPassReport {
  /** `off`: no endpoint configured; `idle`: nothing left to embed; `stopped`: a request failed; `limit`: batches or time ran out first. */
  readonly outcome: 'off' | 'idle' | 'stopped' | 'limit';
  /** Vectors stored by this run. */
  readonly embedded: number;
  /** Embedding rows deleted (another model's, or a tombstoned revision's). */
  readonly removed: number;
  /** Requests that failed. */
  readonly failedRequests: number;
}

interface PassState {
  /** The background pass in flight, if any. */
  running: Promise<void> | undefined;
  /** A trigger arrived while a pass ran: run once more when it ends. */
  again: boolean;
  /** seq -> ctx.clock monotonic time before which a text the endpoint refused alone is not retried. */
  readonly rejected: Map<number, number>;
}

const states = new WeakMap<Database, PassState>();

function stateOf(db: Database): PassState {
  let state = states.get(db);
  if (state === undefined) {
    state = { running: undefined, again: false, rejected: new Map() };
    states.set(db, state);
  }
  return state;
}

/** Live memory revisions without a vector for `model`: the backlog `status` shows. */
export function embeddingBacklog(db: Database, model: string): number {
  const row = db.get<{ n: number }>(
    `SELECT count(*) AS n FROM messages m
     WHERE m.memory_id IS NOT NULL AND m.tombstone = 0
       AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.seq = m.seq AND e.model = ?)`,
    [model],
  );
  return row?.n ?? 0;
}

/**
 * Embeds the backlog oldest first, up to `maxBatches` requests or the
 * deadline. Endpoint failures are logged (never with payloads) and the rows
 * stay for the next run; only database errors throw.
 */
export async function runEmbeddingPass(ctx: EmbeddingContext, options: EmbeddingPassOptions): Promise<EmbeddingPassReport> {
  const settings = embeddingSettings(ctx.config);
  if (settings === undefined) return { outcome: 'off', embedded: 0, removed: 0, failedRequests: 0 };
  const client = createEmbeddingsClient(settings, options.env === undefined ? {} : { env: options.env });
  const state = stateOf(ctx.db);
  const timer = options.timer ?? (() => ctx.clock.monotonic());
  const removed = removeStale(ctx.db, client.model);
  let embedded = 0;
  let failedRequests = 0;

  for (let batch = 0; batch < options.maxBatches; batch++) {
    if (timer() >= options.deadlineMs) return { outcome: 'limit', embedded, removed, failedRequests };
    const rows = pendingRows(ctx, state, client.model);
    if (rows.length === 0) return { outcome: 'idle', embedded, removed, failedRequests };
    const result = await embedRows(ctx, state, client, rows, { deadlineMs: options.deadlineMs, timer });
    embedded += result.embedded;
    failedRequests += result.failedRequests;
    if (result.stop) return { outcome: 'stopped', embedded, removed, failedRequests };
  }
  const outcome = pendingRows(ctx, state, client.model).length === 0 ? 'idle' : 'limit';
  return { outcome, embedded, removed, failedRequests };
}

/** Deletes vectors of other models and of tombstoned revisions, in short transactions. */
function removeStale(db: Database, model: string): number {
  let removed = 0;
  for (;;) {
    const changes = db.transaction(
      () =>
        db.run(
          `DELETE FROM embeddings WHERE seq IN (
             SELECT e.seq FROM embeddings e JOIN messages m ON m.seq = e.seq
             WHERE e.model <> ? OR m.tombstone = 1 LIMIT ${CLEANUP_CHUNK})`,
          [model],
        ).changes,
    );
    removed += changes;
    if (changes < CLEANUP_CHUNK) return removed;
  }
}

interface PendingRow {
  /** A live memory revision without a vector for the configured model. */
  readonly seq: number;
  /** Its text, sent to the endpoint and never logged. */
  readonly content: string;
}

function pendingRows(ctx: EmbeddingContext, state: PassState, model: string): PendingRow[] {
  const now = ctx.clock.monotonic();
  for (const [seq, until] of state.rejected) if (until <= now) state.rejected.delete(seq);
  const rows = ctx.db.all<PendingRow>(
    `SELECT m.seq AS seq, m.content AS content FROM messages m
     WHERE m.memory_id IS NOT NULL AND m.tombstone = 0
       AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.seq = m.seq AND e.model = ?)
     ORDER BY m.seq ${ctx.db.capabilities.dialect.limit}`,
    [model, EMBEDDING_BATCH_SIZE + state.rejected.size],
  );
  return rows.filter((r) => !state.rejected.has(r.seq)).slice(0, EMBEDDING_BATCH_SIZE);
}

interface Deadline {
  /** No request starts at or after this time on `timer`. */
  readonly deadlineMs: number;
  /** The clock the deadline is on. */
  readonly timer: () => number;
}

interface BatchResult {
  /** Vectors stored. */
  readonly embedded: number;
  /** Requests that failed, including halves of a split batch. */
  readonly failedRequests: number;
  /** The endpoint is failing as a whole: end this run, retry on the next. */
  readonly stop: boolean;
}

async function embedRows(
  ctx: EmbeddingContext,
  state: PassState,
  client: EmbeddingsClient,
  rows: readonly PendingRow[],
  deadline: Deadline,
): Promise<BatchResult> {
  const timeoutMs = Math.min(BATCH_TIMEOUT_MS, Math.max(1, deadline.deadlineMs - deadline.timer()));
  try {
    const vectors = await client.embed(
      rows.map((r) => r.content),
      { timeoutMs, expectedDimensions: storedDimensions(ctx.db, client.model) },
    );
    return { embedded: store(ctx.db, client.model, rows, vectors), failedRequests: 0, stop: false };
  } catch (error) {
    if (!isEmbeddingError(error)) throw error;
    ctx.log.warn('embedding request failed; the rows stay queued', {
      kind: error.kind,
      status: error.status,
      reason: error.message,
      texts: rows.length,
      firstSeq: rows[0]?.seq,
    });
    if (!refusedForContent(error)) return { embedded: 0, failedRequests: 1, stop: true };
    return isolate(ctx, state, client, rows, deadline);
  }
}

/**
 * The endpoint refused this request's content (e.g. a text longer than the
 * model accepts): halve the batch so one bad text does not hold back the
 * rest, and set aside a single refused text for a while.
 */
async function isolate(
  ctx: EmbeddingContext,
  state: PassState,
  client: EmbeddingsClient,
  rows: readonly PendingRow[],
  deadline: Deadline,
): Promise<BatchResult> {
  if (rows.length === 1) {
    const row = rows[0] as PendingRow;
    state.rejected.set(row.seq, ctx.clock.monotonic() + REJECTED_RETRY_MS);
    ctx.log.warn('embedding endpoint refused one memory revision; retrying it later', { seq: row.seq });
    return { embedded: 0, failedRequests: 1, stop: false };
  }
  if (deadline.timer() >= deadline.deadlineMs) return { embedded: 0, failedRequests: 1, stop: true };
  const half = Math.ceil(rows.length / 2);
  const first = await embedRows(ctx, state, client, rows.slice(0, half), deadline);
  if (first.stop) return { ...first, failedRequests: first.failedRequests + 1 };
  const second = await embedRows(ctx, state, client, rows.slice(half), deadline);
  return {
    embedded: first.embedded + second.embedded,
    failedRequests: 1 + first.failedRequests + second.failedRequests,
    stop: second.stop,
  };
}

/** 400, 413 and 422 blame the request's content; anything else (5xx, 401, 429, timeouts) blames the endpoint. */
function refusedForContent(error: EmbeddingError): boolean {
  return error.kind === 'http' && (error.status === 400 || error.status === 413 || error.status === 422);
}

/** The dimension count of vectors already stored for `model`, so a changed answer is caught. */
export function storedDimensions(db: Database, model: string): number | undefined {
  const row = db.get<{ n: number }>('SELECT length(vector) AS n FROM embeddings WHERE model = ? LIMIT 1', [model]);
  return row === undefined ? undefined : row.n / 4;
}

function store(db: Database, model: string, rows: readonly PendingRow[], vectors: readonly Float32Array[]): number {
  return db.transaction(() => {
    let stored = 0;
    rows.forEach((row, i) => {
      const vector = vectors[i];
      if (vector === undefined) return;
      // The revision may have been superseded or deleted while the request was out.
      // An upsert, not INSERT OR REPLACE: the spelling both SQLite and PostgreSQL have
      // (the WHERE keeps SQLite from reading ON CONFLICT as a join's ON).
      stored += db.run(
        `INSERT INTO embeddings (seq, model, vector)
         SELECT seq, ?, ? FROM messages WHERE seq = ? AND tombstone = 0
         ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
        [model, encodeVector(vector), row.seq],
      ).changes;
    });
    return stored;
  });
}

/**
 * Starts a best-effort pass in the background after a memory mutation
 * committed. Never throws and never delays the caller; one pass per
 * database per process, and triggers that arrive meanwhile coalesce into one
 * more run.
 */
export function triggerEmbeddingPass(ctx: EmbeddingContext): void {
  if (embeddingSettings(ctx.config) === undefined) return;
  const state = stateOf(ctx.db);
  if (state.running !== undefined) {
    state.again = true;
    return;
  }
  const loop = async (): Promise<void> => {
    do {
      state.again = false;
      try {
        await runEmbeddingPass(ctx, { maxBatches: AFTER_WRITE_BATCHES, deadlineMs: ctx.clock.monotonic() + AFTER_WRITE_BUDGET_MS });
      } catch (error) {
        ctx.log.warn('background embedding pass failed; the maintenance tick will retry', {
          error: error instanceof Error ? error.name : 'unknown',
          reason: error instanceof Error ? error.message : undefined,
        });
      }
    } while (state.again);
  };
  state.running = loop().finally(() => {
    state.running = undefined;
  });
}

/** Resolves when no background pass is running for this database (for tests and orderly shutdown). */
export async function embeddingPassSettled(db: Database): Promise<void> {
  const state = states.get(db);
  while (state?.running !== undefined) await state.running;
}

/**
 * The embedding pass as a maintenance tick step: `MaintenanceSteps.embeddingPass`.
 * `timer` must be the tick's timer, on which it gives the deadline.
 */
export function embeddingPassStep(ctx: EmbeddingContext, timer: () => number = () => ctx.clock.monotonic()): (deadlineMs: number) => Promise<void> {
  return async (deadlineMs) => {
    await runEmbeddingPass(ctx, { maxBatches: EMBEDDING_BATCHES_PER_TICK, deadlineMs, timer });
  };
}
