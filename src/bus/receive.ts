/**
 * receive, in five steps (docs/architecture.md, "Behaviour, briefly", says the same for users):
 *
 * 1. `as` is checked with the owner token; subscriptions idle past
 *    cursor_idle_hours are deleted (`expired` notice), and so are the
 *    markers of subscriptions the maintenance tick expired meanwhile (the
 *    same notice, once); the others involved get last_activity = now.
 * 2. `ack` advances every subscription of this sender whose pending token
 *    matches to its pending_end_seq; a token matching nothing is `ack_ignored`.
 * 3. A pending batch left unacknowledged is delivered again (the surviving
 *    messages between cursor and pending_end_seq) with `redelivered: true`
 *    and an instruction naming the token.
 * 4. Otherwise messages after each cursor, merged by seq, own messages
 *    excluded unless include_own, tombstoned rows skipped, up to `count` and
 *    the result byte ceiling (whole records; a single record over the
 *    ceiling is delivered alone). Each contributing subscription's
 *    pending_end_seq is its highest delivered seq, under one new token.
 * 5. With nothing available and wait_seconds > 0, wait for a commit (see
 *    change-waiter.ts) and look again until the deadline. While waiting, a
 *    look is a read; only a look that finds something writes.
 *
 * A gap (cursor below the channel's eviction boundary) is reported once and
 * the cursor moves up to the boundary: delivery resumes at the oldest
 * survivor. `evicted_before_seq = E` means every message of the channel with
 * seq < E is gone, so a cursor c misses messages only when c < E - 1.
 */
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { createPollingWaiter, type ChangeWaiter } from './change-waiter.js';
import { AsField, requireSession } from './identity.js';
import { fitToCeiling, HARD_RESULT_CEILING_BYTES, MESSAGE_COLUMNS, MessageOutput, toMessage, type Message, type MessageRow } from './message-row.js';
import { ChannelNameField } from './names.js';
import { NoticeOutput, type Notice } from './notice.js';
import { takeoverNotices } from './reservations-takeover.js';
import { invalid, parseInput } from './validate.js';

/** The fixed maxima of the schema; the configured ones are checked in code. */
const COUNT_SCHEMA_MAX = 10_000;
const WAIT_SCHEMA_MAX = 240;
const PROGRESS_INTERVAL_MS = 1000;

export const BatchTokenField = v.pipe(
  v.string('must be the batch_token string of your previous receive'),
  v.minLength(1, 'must not be empty; omit ack when there is nothing to acknowledge'),
  v.maxLength(128, 'must be at most 128 characters: pass the batch_token your previous receive returned'),
);

export const ReceiveInput = v.strictObject({
  as: AsField,
  // null is what an empty receive returns as batch_token; passing it back means "nothing to acknowledge".
  ack: v.optional(
    v.pipe(
      v.nullable(BatchTokenField),
      v.description('The batch_token of your previous receive, to acknowledge its messages; without it the same batch comes again. Omit it, or pass null, when there is nothing to acknowledge.'),
      v.transform((token) => token ?? undefined),
    ),
  ),
  count: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(COUNT_SCHEMA_MAX, `must be at most receive_max_count (never above ${COUNT_SCHEMA_MAX})`),
      v.description('At most this many messages (default 100, at most 1000 unless configured otherwise).'),
    ),
  ),
  wait_seconds: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(WAIT_SCHEMA_MAX, `must be at most receive_max_wait_seconds (never above ${WAIT_SCHEMA_MAX})`),
      v.description('When nothing is waiting, wait up to this many seconds for a message (default 0: return at once; at most 60 unless configured otherwise).'),
    ),
    0,
  ),
  channels: v.optional(
    v.pipe(
      v.array(ChannelNameField, 'must be an array of channel names you subscribed to'),
      v.minLength(1, 'must name at least one channel; omit it to receive from all your subscriptions'),
      v.maxLength(256, 'must name at most 256 channels'),
      v.description('Only these of your subscribed channels (default: all of them).'),
    ),
  ),
  include_own: v.optional(v.pipe(v.boolean('must be true or false'), v.description('Also deliver your own messages (default false).')), false),
});
export type ReceiveInput = v.InferInput<typeof ReceiveInput>;

export const ReceiveOutput = v.object({
  messages: v.array(MessageOutput),
  /** Pass as `ack` on the next receive to acknowledge these messages; null when there are none. */
  batch_token: v.nullable(v.string()),
  /** True when these messages were delivered before and not acknowledged. */
  redelivered: v.boolean(),
  notices: v.array(NoticeOutput),
  /** One line telling the agent what to do next, when that is not obvious. */
  instruction: v.optional(v.string()),
});
export type ReceiveResult = v.InferOutput<typeof ReceiveOutput>;

export interface ReceiveOptions {
  /** Aborts a wait: the call returns an empty result and creates no batch. */
  readonly signal?: AbortSignal;
  /** Called about once a second while waiting, with elapsed and total wait in ms. */
  readonly onProgress?: (elapsedMs: number, totalMs: number) => void;
  /** How to wait for other processes' commits; defaults to a plain 250 ms poll. */
  readonly waiter?: ChangeWaiter;
}

interface SubRow {
  /** The subscribed channel. */
  channel: string;
  /** Everything up to this seq counts as delivered. */
  cursor_seq: number;
  /** Last receive touching this subscription, ms. */
  last_activity: number;
  /** The unacknowledged batch's token, or null (null exactly when pending_end_seq is). */
  pending_token: string | null;
  /** The highest seq of the unacknowledged batch, or null. */
  pending_end_seq: number | null;
  /** The channel's eviction boundary. */
  evicted_before_seq: number;
}

interface Request {
  /** The display name receiving (already owner-checked per attempt). */
  readonly sender: string;
  /** The `channels` filter without duplicates, or undefined for all subscriptions. */
  readonly channels: readonly string[] | undefined;
  /** Whether the sender's own messages are delivered. */
  readonly includeOwn: boolean;
  /** The most messages one result carries. */
  readonly count: number;
  /** The result byte ceiling. */
  readonly ceilingBytes: number;
}

interface Attempt {
  /** The result to return, or undefined when nothing was delivered. */
  readonly result: ReceiveResult | undefined;
  /** One-shot notices (expired, ack_ignored, gap) produced by this attempt. */
  readonly notices: Notice[];
  /** The capacity notice as of this attempt, if set. */
  readonly capacity: Notice | undefined;
  /** False when the sender has no subscription to look at, so waiting is pointless. */
  readonly subscribed: boolean;
}

function newToken(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Receives messages for `as`. Throws `validation` (including count above
 * receive_max_count, wait_seconds above receive_max_wait_seconds),
 * `not_registered`, `not_found` (a `channels` entry `as` is not subscribed to).
 */
export async function receive(ctx: BusContext, rawInput: unknown, options: ReceiveOptions = {}): Promise<ReceiveResult> {
  const input = parseInput(ReceiveInput, rawInput);
  const { config } = ctx;
  if (input.count !== undefined && input.count > config.receive_max_count) {
    throw invalid('count', `must be at most receive_max_count (${config.receive_max_count}); got ${input.count}`);
  }
  if (input.wait_seconds > config.receive_max_wait_seconds) {
    throw invalid('wait_seconds', `must be at most receive_max_wait_seconds (${config.receive_max_wait_seconds}); got ${input.wait_seconds}`);
  }
  const request: Request = {
    sender: input.as,
    channels: input.channels === undefined ? undefined : [...new Set(input.channels)],
    includeOwn: input.include_own,
    count: input.count ?? config.receive_default_count,
    ceilingBytes: Math.min(config.result_default_kib * 1024, HARD_RESULT_CEILING_BYTES),
  };
  const { signal, onProgress } = options;
  const waiter = options.waiter ?? createPollingWaiter();
  const notices: Notice[] = [];
  const totalMs = input.wait_seconds * 1000;
  // On the monotonic clock: a wall-clock jump must neither stretch nor cut the wait.
  const startedAt = ctx.clock.monotonic();
  const deadline = startedAt + totalMs;
  let lastProgress = startedAt;

  const finish = (attempt: Attempt | undefined, result?: ReceiveResult): ReceiveResult => {
    const all = [...notices, ...(attempt?.capacity === undefined ? [] : [attempt.capacity])];
    return { ...(result ?? { messages: [], batch_token: null, redelivered: false }), notices: all };
  };

  if (signal?.aborted) return finish(undefined);
  let attempt = ctx.db.transaction(() => {
    const first = attemptReceive(ctx, request, input.ack);
    // Told once, in the first attempt: which of the caller's reservations others took over while it was stalled.
    return { ...first, notices: [...takeoverNotices(ctx.db, request.sender), ...first.notices] };
  });
  notices.push(...attempt.notices);
  if (attempt.result !== undefined) return finish(attempt, attempt.result);
  if (!attempt.subscribed) {
    return {
      ...finish(attempt),
      instruction:
        request.channels === undefined
          ? 'You are not subscribed to any channel: call subscribe (see list_channels) before receive.'
          : 'You are not subscribed to any of these channels any more: call subscribe again.',
    };
  }
  for (let now = ctx.clock.monotonic(); now < deadline; ) {
    await waiter.waitForChange(deadline - now, signal);
    if (signal?.aborted) return finish(attempt);
    now = ctx.clock.monotonic();
    if (onProgress !== undefined && now - lastProgress >= PROGRESS_INTERVAL_MS) {
      lastProgress = now;
      onProgress(Math.min(now - startedAt, totalMs), totalMs);
    }
    // A look while waiting is a read, so it does not itself wake every waiter.
    if (!ctx.db.read(() => available(ctx, request))) continue;
    attempt = ctx.db.transaction(() => attemptReceive(ctx, request, undefined));
    notices.push(...attempt.notices);
    if (attempt.result !== undefined) return finish(attempt, attempt.result);
  }
  return finish(attempt);
}

/** Steps 1–4 in one write transaction. `result` is undefined when nothing was delivered. */
function attemptReceive(ctx: BusContext, request: Request, ack: string | undefined): Attempt {
  const { db, config } = ctx;
  const { sender } = requireSession(ctx, request.sender);
  const now = ctx.clock.now();
  const notices: Notice[] = [];

  let subs = loadSubscriptions(ctx, sender, request.channels);
  // Step 1a: subscriptions the tick expired while this sender was away, each reported once.
  const expiredByTick = takeExpiryMarkers(ctx, sender, request.channels);
  for (const channel of expiredByTick) notices.push(expiredNotice(channel, config.cursor_idle_hours));
  if (request.channels !== undefined) {
    const known = new Set([...subs.map((s) => s.channel), ...expiredByTick]);
    const missing = request.channels.find((c) => !known.has(c));
    if (missing !== undefined) {
      throw new BusError('not_found', `channels: you are not subscribed to "${missing}"; subscribe first, or leave it out`, { field: 'channels' });
    }
  }

  // Step 1: expiry, then touch.
  const idleBefore = now - config.cursor_idle_hours * 3_600_000;
  for (const sub of subs.filter((s) => s.last_activity < idleBefore)) {
    db.run('DELETE FROM subscriptions WHERE sender = ? AND channel = ?', [sender, sub.channel]);
    notices.push(expiredNotice(sub.channel, config.cursor_idle_hours));
  }
  subs = subs.filter((s) => s.last_activity >= idleBefore);
  for (const sub of subs) db.run('UPDATE subscriptions SET last_activity = ? WHERE sender = ? AND channel = ?', [now, sender, sub.channel]);

  // Step 2: acknowledge across all of this sender's subscriptions.
  if (ack !== undefined) {
    const { changes } = db.run(
      `UPDATE subscriptions SET cursor_seq = ${db.capabilities.dialect.greatest}(cursor_seq, pending_end_seq), pending_token = NULL, pending_end_seq = NULL
        WHERE sender = ? AND pending_token = ?`,
      [sender, ack],
    );
    if (changes === 0) {
      notices.push({
        kind: 'ack_ignored',
        message: 'The ack token matches no pending batch (already acknowledged, or replaced); nothing was acknowledged. Acknowledge with the batch_token of your latest receive.',
      });
    }
    subs = loadSubscriptions(ctx, sender, subs.map((s) => s.channel));
  }

  // Gaps: report once and move the cursor to the eviction boundary.
  for (const sub of subs) {
    const boundary = sub.evicted_before_seq - 1;
    if (sub.cursor_seq >= boundary) continue;
    notices.push({
      kind: 'gap',
      channel: sub.channel,
      message: `Messages on "${sub.channel}" with seq ${sub.cursor_seq + 1} to ${boundary} were deleted by retention or capacity eviction before you received them; delivery resumes at the oldest message still stored.`,
    });
    sub.cursor_seq = boundary;
    if (sub.pending_end_seq !== null && sub.pending_end_seq <= boundary) {
      sub.pending_token = null;
      sub.pending_end_seq = null;
    }
    db.run('UPDATE subscriptions SET cursor_seq = ?, pending_token = ?, pending_end_seq = ? WHERE sender = ? AND channel = ?', [
      sub.cursor_seq,
      sub.pending_token,
      sub.pending_end_seq,
      sender,
      sub.channel,
    ]);
  }

  const capacity = capacityNotice(ctx);
  const base = { notices, capacity, subscribed: subs.length > 0 };

  // Step 3: redeliver an unacknowledged batch.
  const pending = subs.filter((s) => s.pending_token !== null);
  if (pending.length > 0) {
    const rows = pending.flatMap((s) => selectRows(ctx, s, request, s.pending_end_seq));
    const picked = pick(rows, request);
    if (picked.messages.length > 0) {
      const tokens = new Set(pending.map((s) => s.pending_token));
      const token = tokens.size === 1 ? pending[0]!.pending_token! : newToken();
      for (const sub of pending) {
        const highest = highestDelivered(picked.messages, sub.channel);
        // Untruncated, the old end stands (it may sit past skipped own or tombstoned rows);
        // truncated, the batch shrinks to what was actually delivered again.
        if (!picked.truncated) {
          if (highest === undefined) advance(ctx, sender, sub.channel, sub.pending_end_seq!);
          else setPending(ctx, sender, sub.channel, token, sub.pending_end_seq!);
        } else if (highest === undefined) {
          setPending(ctx, sender, sub.channel, null, null);
        } else {
          setPending(ctx, sender, sub.channel, token, highest);
        }
      }
      return {
        ...base,
        result: {
          messages: picked.messages,
          batch_token: token,
          redelivered: true,
          notices: [],
          instruction: `These messages were delivered before but not acknowledged: pass ack: "${token}" on your next receive to acknowledge them.`,
        },
      };
    }
    // Nothing of the batch survives (evicted, tombstoned or own): it is done.
    for (const sub of pending) {
      advance(ctx, sender, sub.channel, sub.pending_end_seq!);
      sub.cursor_seq = Math.max(sub.cursor_seq, sub.pending_end_seq!);
      sub.pending_token = null;
      sub.pending_end_seq = null;
    }
  }

  // Step 4: a new batch.
  const rows = subs.flatMap((s) => selectRows(ctx, s, request, null));
  const picked = pick(rows, request);
  if (picked.messages.length === 0) return { ...base, result: undefined };
  const token = newToken();
  for (const sub of subs) {
    const highest = highestDelivered(picked.messages, sub.channel);
    if (highest !== undefined) setPending(ctx, sender, sub.channel, token, highest);
  }
  return { ...base, result: { messages: picked.messages, batch_token: token, redelivered: false, notices: [] } };
}

function expiredNotice(channel: string, idleHours: number): Notice {
  return {
    kind: 'expired',
    channel,
    message: `Your subscription to "${channel}" expired after ${idleHours} hours without a receive; subscribe again (from "now" by default, or "oldest").`,
  };
}

/** Deletes and returns the channels (within the filter) whose subscriptions the maintenance tick expired for `sender`. */
function takeExpiryMarkers(ctx: BusContext, sender: string, channels: readonly string[] | undefined): string[] {
  const wanted = channels === undefined ? undefined : new Set(channels);
  const taken = ctx.db
    .all<{ channel: string }>('SELECT channel FROM expired_subscriptions WHERE sender = ? ORDER BY channel', [sender])
    .map((r) => r.channel)
    .filter((c) => wanted === undefined || wanted.has(c));
  for (const channel of taken) ctx.db.run('DELETE FROM expired_subscriptions WHERE sender = ? AND channel = ?', [sender, channel]);
  return taken;
}

function loadSubscriptions(ctx: BusContext, sender: string, channels: readonly string[] | undefined): SubRow[] {
  const subs = ctx.db.all<SubRow>(
    `SELECT s.channel, s.cursor_seq, s.last_activity, s.pending_token, s.pending_end_seq, c.evicted_before_seq
       FROM subscriptions s JOIN channels c ON c.name = s.channel
      WHERE s.sender = ? ORDER BY s.channel`,
    [sender],
  );
  if (channels === undefined) return subs;
  const wanted = new Set(channels);
  return subs.filter((s) => wanted.has(s.channel));
}

// One row past `count` per channel tells `pick` whether the batch was cut short.
function selectRows(ctx: BusContext, sub: SubRow, request: Request, upTo: number | null): MessageRow[] {
  return ctx.db.all<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m
      WHERE m.channel = ? AND m.seq > ? AND m.seq <= ? AND m.tombstone = 0 AND (? OR m.sender != ?)
      ORDER BY m.seq LIMIT ?`,
    [sub.channel, sub.cursor_seq, upTo ?? Number.MAX_SAFE_INTEGER, request.includeOwn ? 1 : 0, request.sender, request.count + 1],
  );
}

function pick(rows: MessageRow[], request: Request): { messages: Message[]; truncated: boolean } {
  rows.sort((a, b) => a.seq - b.seq);
  const counted = rows.slice(0, request.count);
  const fitted = fitToCeiling(counted.map(toMessage), request.ceilingBytes);
  return { messages: fitted.messages, truncated: fitted.truncated || counted.length < rows.length };
}

function highestDelivered(messages: readonly Message[], channel: string): number | undefined {
  let highest: number | undefined;
  for (const m of messages) if (m.channel === channel) highest = m.seq;
  return highest;
}

function setPending(ctx: BusContext, sender: string, channel: string, token: string | null, end: number | null): void {
  ctx.db.run('UPDATE subscriptions SET pending_token = ?, pending_end_seq = ? WHERE sender = ? AND channel = ?', [token, end, sender, channel]);
}

function advance(ctx: BusContext, sender: string, channel: string, to: number): void {
  ctx.db.run(
    `UPDATE subscriptions SET cursor_seq = ${ctx.db.capabilities.dialect.greatest}(cursor_seq, ?), pending_token = NULL, pending_end_seq = NULL WHERE sender = ? AND channel = ?`,
    [to, sender, channel],
  );
}

function capacityNotice(ctx: BusContext): Notice | undefined {
  const row = ctx.db.get<{ message: string }>("SELECT message FROM notices WHERE kind = 'capacity'");
  return row === undefined ? undefined : { kind: 'capacity', message: row.message };
}

/** Whether a write attempt would deliver something now: a cheap read used while waiting. */
function available(ctx: BusContext, request: Request): boolean {
  requireSession(ctx, request.sender);
  const subs = loadSubscriptions(ctx, request.sender, request.channels);
  return subs.some(
    (s) =>
      s.pending_token !== null ||
      ctx.db.get(
        `SELECT 1 FROM messages m WHERE m.channel = ? AND m.seq > ? AND m.tombstone = 0 AND (? OR m.sender != ?) LIMIT 1`,
        [s.channel, s.cursor_seq, request.includeOwn ? 1 : 0, request.sender],
      ) !== undefined,
  );
}
