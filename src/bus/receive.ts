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
 *    change-waiter.ts: the common bell, and this name's bell, which only
 *    direct messages to it ring) and look again until the deadline. While waiting, a
 *    look is a read; only a look that finds something writes.
 *
 * Direct messages (sql/0012) to `as` are merged in by seq at steps 3 and 4
 * whatever the subscriptions and the `channels` filter: each is delivered
 * under the same batch token and acknowledged with it, but by its own state
 * row rather than a cursor. With `reply_to`, only the direct replies to that
 * seq are delivered (ask-and-wait); the subscriptions and the other direct
 * messages are left as they were.
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
import { lastSeq } from './channels.js';
import { deliverableAfter } from './deliverable.js';
import { acknowledgeDirect, directSeqs, hasDirect, markDelivered, returnUndelivered, selectDirect } from './direct-recipients.js';
import { SeqField } from './envelope.js';
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
      v.description('Only these of your subscribed channels (default: all of them). Direct messages to you come whatever this says.'),
    ),
  ),
  include_own: v.optional(v.pipe(v.boolean('must be true or false'), v.description('Also deliver your own messages (default false).')), false),
  reply_to: v.optional(
    v.pipe(
      SeqField,
      v.description(
        'Ask and wait: deliver only the direct messages to you that reply to this seq (e.g. the question you just sent with `to`), waiting up to wait_seconds for one. Everything else stays deliverable to your next plain receive. Acknowledge with `ack` as usual.',
      ),
    ),
  ),
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
  /** Ask-and-wait: only direct replies to this seq; undefined for a plain receive. */
  readonly replyTo: number | undefined;
}

interface Attempt {
  /** The result to return, or undefined when nothing was delivered. */
  readonly result: ReceiveResult | undefined;
  /** One-shot notices (expired, ack_ignored, gap) produced by this attempt. */
  readonly notices: Notice[];
  /** The capacity notice as of this attempt, if set. */
  readonly capacity: Notice | undefined;
  /** False when the sender has no subscription to look at (only direct messages can come). */
  readonly subscribed: boolean;
}

function newToken(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Receives messages for `as`. Throws `validation` (including count above
 * receive_max_count, wait_seconds above receive_max_wait_seconds, a reply_to
 * above the last seq handed out, reply_to with channels),
 * `not_registered`, `not_found` (a `channels` entry `as` is not subscribed to).
 */
export async function receive(ctx: BusContext, rawInput: unknown, options: ReceiveOptions = {}): Promise<ReceiveResult> {
  const input = parseInput(ReceiveInput, rawInput);
  const request = toRequest(ctx, input);
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
    const empty = { messages: [], batch_token: null, redelivered: false, ...(attempt === undefined ? {} : unsubscribedInstruction(attempt, request)) };
    return { ...(result ?? empty), notices: all };
  };

  if (signal?.aborted) return finish(undefined);
  // Direct messages ring only their addressees' bells: listen to this name's before the first look.
  if (totalMs > 0) waiter.watchName?.(request.sender);
  let attempt = ctx.db.transaction(() => {
    const first = attemptReceive(ctx, request, input.ack);
    // Told once, in the first attempt: which of the caller's reservations others took over while it was stalled.
    return { ...first, notices: [...takeoverNotices(ctx.db, request.sender), ...first.notices] };
  });
  notices.push(...attempt.notices);
  if (attempt.result !== undefined) return finish(attempt, attempt.result);
  for (let now = ctx.clock.monotonic(); now < deadline; ) {
    await waiter.waitForChange(deadline - now, signal, request.sender);
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

/** The checks valibot cannot make, then the request every attempt works from. */
function toRequest(ctx: BusContext, input: v.InferOutput<typeof ReceiveInput>): Request {
  const { config } = ctx;
  if (input.count !== undefined && input.count > config.receive_max_count) {
    throw invalid('count', `must be at most receive_max_count (${config.receive_max_count}); got ${input.count}`);
  }
  if (input.wait_seconds > config.receive_max_wait_seconds) {
    throw invalid('wait_seconds', `must be at most receive_max_wait_seconds (${config.receive_max_wait_seconds}); got ${input.wait_seconds}`);
  }
  if (input.reply_to !== undefined) {
    if (input.channels !== undefined) throw invalid('reply_to', 'give reply_to or channels, not both: replies to a direct message come whatever the channel');
    const last = ctx.db.read(() => lastSeq(ctx));
    if (input.reply_to > last) throw invalid('reply_to', `no message has seq ${input.reply_to} yet (the latest is ${last}); pass the seq send returned for your question`);
  }
  return {
    sender: input.as,
    channels: input.channels === undefined ? undefined : [...new Set(input.channels)],
    includeOwn: input.include_own,
    count: input.count ?? config.receive_default_count,
    ceilingBytes: Math.min(config.result_default_kib * 1024, HARD_RESULT_CEILING_BYTES),
    replyTo: input.reply_to,
  };
}

/** An empty plain receive by a name with no subscriptions says how to get channel messages (direct ones come anyway). */
function unsubscribedInstruction(attempt: Attempt, request: Request): { instruction?: string } {
  if (attempt.subscribed || request.replyTo !== undefined) return {};
  return {
    instruction:
      request.channels === undefined
        ? 'You are not subscribed to any channel, so only direct messages reach you: call subscribe (see list_channels) for channel messages.'
        : 'You are not subscribed to any of these channels any more: call subscribe again.',
  };
}

/** Steps 1–4 in one write transaction. `result` is undefined when nothing was delivered. */
function attemptReceive(ctx: BusContext, request: Request, ack: string | undefined): Attempt {
  const { sender } = requireSession(ctx, request.sender);
  const now = ctx.clock.now();
  const notices: Notice[] = [];
  let subs = touchSubscriptions(ctx, request, sender, now, notices);
  if (ack !== undefined) {
    acknowledge(ctx, sender, ack, now, notices);
    subs = loadSubscriptions(ctx, sender, subs.map((s) => s.channel));
  }
  closeGaps(ctx, sender, subs, notices);
  const base = { notices, capacity: capacityNotice(ctx), subscribed: subs.length > 0 };
  if (request.replyTo !== undefined) return { ...base, result: deliverReplies(ctx, request, sender, request.replyTo, now) };
  const again = redeliver(ctx, request, sender, subs, now);
  if (again !== undefined) return { ...base, result: again };
  return { ...base, result: deliverNew(ctx, request, sender, subs, now) };
}

/**
 * Step 1: the subscriptions in the filter, after reporting the ones the tick
 * expired, deleting the ones idle past cursor_idle_hours (both `expired`) and
 * touching the rest. Throws `not_found` for a filter entry never subscribed.
 */
function touchSubscriptions(ctx: BusContext, request: Request, sender: string, now: number, notices: Notice[]): SubRow[] {
  const { db, config } = ctx;
  const subs = loadSubscriptions(ctx, sender, request.channels);
  const expiredByTick = takeExpiryMarkers(ctx, sender, request.channels);
  for (const channel of expiredByTick) notices.push(expiredNotice(channel, config.cursor_idle_hours));
  if (request.channels !== undefined) {
    const known = new Set([...subs.map((s) => s.channel), ...expiredByTick]);
    const missing = request.channels.find((c) => !known.has(c));
    if (missing !== undefined) {
      throw new BusError('not_found', `channels: you are not subscribed to "${missing}"; subscribe first, or leave it out`, { field: 'channels' });
    }
  }
  const idleBefore = now - config.cursor_idle_hours * 3_600_000;
  for (const sub of subs.filter((s) => s.last_activity < idleBefore)) {
    db.run('DELETE FROM subscriptions WHERE sender = ? AND channel = ?', [sender, sub.channel]);
    notices.push(expiredNotice(sub.channel, config.cursor_idle_hours));
  }
  const kept = subs.filter((s) => s.last_activity >= idleBefore);
  for (const sub of kept) db.run('UPDATE subscriptions SET last_activity = ? WHERE sender = ? AND channel = ?', [now, sender, sub.channel]);
  return kept;
}

/** Step 2: acknowledge the batch `ack` across all of this sender's subscriptions and direct messages. */
function acknowledge(ctx: BusContext, sender: string, ack: string, now: number, notices: Notice[]): void {
  const { changes } = ctx.db.run(
    `UPDATE subscriptions SET cursor_seq = ${ctx.db.capabilities.dialect.greatest}(cursor_seq, pending_end_seq), pending_token = NULL, pending_end_seq = NULL
      WHERE sender = ? AND pending_token = ?`,
    [sender, ack],
  );
  if (changes + acknowledgeDirect(ctx.db, sender, ack, now) > 0) return;
  notices.push({
    kind: 'ack_ignored',
    message: 'The ack token matches no pending batch (already acknowledged, or replaced); nothing was acknowledged. Acknowledge with the batch_token of your latest receive.',
  });
}

/** Gaps: report once and move the cursor to the eviction boundary. */
function closeGaps(ctx: BusContext, sender: string, subs: SubRow[], notices: Notice[]): void {
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
    ctx.db.run('UPDATE subscriptions SET cursor_seq = ?, pending_token = ?, pending_end_seq = ? WHERE sender = ? AND channel = ?', [
      sub.cursor_seq,
      sub.pending_token,
      sub.pending_end_seq,
      sender,
      sub.channel,
    ]);
  }
}

/**
 * Step 3: the unacknowledged batch again (channel messages up to each
 * pending end, direct messages still delivered), under its token when it had
 * one, else a new one. A batch of which nothing survives is done: its
 * subscriptions advance (and `subs` with them) and undefined is returned.
 */
function redeliver(ctx: BusContext, request: Request, sender: string, subs: SubRow[], now: number): ReceiveResult | undefined {
  const pending = subs.filter((s) => s.pending_token !== null);
  const direct = selectDirect(ctx.db, sender, { state: 'delivered' }, request.count + 1);
  if (pending.length === 0 && direct.length === 0) return undefined;
  const picked = pick([...pending.flatMap((s) => selectRows(ctx, s, request, s.pending_end_seq)), ...direct], request);
  if (picked.messages.length === 0) {
    // Nothing of the batch survives (evicted, tombstoned or own): it is done.
    for (const sub of pending) {
      advance(ctx, sender, sub.channel, sub.pending_end_seq!);
      sub.cursor_seq = Math.max(sub.cursor_seq, sub.pending_end_seq!);
      sub.pending_token = null;
      sub.pending_end_seq = null;
    }
    return undefined;
  }
  const tokens = new Set([...pending.map((s) => s.pending_token!), ...direct.map((d) => d.direct_token!)]);
  const token = tokens.size === 1 ? [...tokens][0]! : newToken();
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
  const seqs = directSeqs(picked.messages);
  markDelivered(ctx.db, sender, seqs, token, now);
  returnUndelivered(ctx.db, sender, seqs);
  return {
    messages: picked.messages,
    batch_token: token,
    redelivered: true,
    notices: [],
    instruction: `These messages were delivered before but not acknowledged: pass ack: "${token}" on your next receive to acknowledge them.`,
  };
}

/** Step 4: a new batch of channel messages after each cursor and unread direct messages, merged by seq. */
function deliverNew(ctx: BusContext, request: Request, sender: string, subs: readonly SubRow[], now: number): ReceiveResult | undefined {
  const direct = selectDirect(ctx.db, sender, { state: 'unread' }, request.count + 1);
  const picked = pick([...subs.flatMap((s) => selectRows(ctx, s, request, null)), ...direct], request);
  if (picked.messages.length === 0) return undefined;
  const token = newToken();
  for (const sub of subs) {
    const highest = highestDelivered(picked.messages, sub.channel);
    if (highest !== undefined) setPending(ctx, sender, sub.channel, token, highest);
  }
  markDelivered(ctx.db, sender, directSeqs(picked.messages), token, now);
  return { messages: picked.messages, batch_token: token, redelivered: false, notices: [] };
}

/**
 * Ask-and-wait: the direct replies to `replyTo` not yet acknowledged, under a
 * new token. Only direct messages can be taken out of order like this: a
 * channel cursor delivers in seq order, so taking one reply out of the middle
 * would skip or repeat the messages around it.
 */
function deliverReplies(ctx: BusContext, request: Request, sender: string, replyTo: number, now: number): ReceiveResult | undefined {
  const rows = selectDirect(ctx.db, sender, { state: 'open', replyTo }, request.count + 1);
  const picked = pick(rows, request);
  if (picked.messages.length === 0) return undefined;
  const token = newToken();
  const seqs = directSeqs(picked.messages);
  const before = new Set(rows.filter((r) => r.direct_token !== null).map((r) => r.seq));
  markDelivered(ctx.db, sender, seqs, token, now);
  return {
    messages: picked.messages,
    batch_token: token,
    redelivered: seqs.every((seq) => before.has(seq)),
    notices: [],
    instruction: `Replies to seq ${replyTo}: pass ack: "${token}" on your next receive to acknowledge them; your other messages are still waiting there.`,
  };
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
  const rule = deliverableAfter(sub.channel, sub.cursor_seq, request.sender, { includeOwn: request.includeOwn, upTo: upTo ?? undefined });
  return ctx.db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${rule.sql} ORDER BY m.seq ${ctx.db.capabilities.dialect.limit}`, [...rule.params, request.count + 1]);
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
  if (request.replyTo !== undefined) return hasDirect(ctx.db, request.sender, { state: 'open', replyTo: request.replyTo });
  if (hasDirect(ctx.db, request.sender, { state: 'open' })) return true;
  const subs = loadSubscriptions(ctx, request.sender, request.channels);
  return subs.some((s) => {
    if (s.pending_token !== null) return true;
    const rule = deliverableAfter(s.channel, s.cursor_seq, request.sender, { includeOwn: request.includeOwn });
    return ctx.db.get(`SELECT 1 AS one FROM messages m WHERE ${rule.sql} LIMIT 1`, rule.params) !== undefined;
  });
}
