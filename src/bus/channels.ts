/**
 * Channels: create, list, subscribe, unsubscribe.
 *
 * A channel must exist before anyone sends to or subscribes to it:
 * `send`, `subscribe`, `unsubscribe` and `history` on an unknown channel are
 * `not_found` with a hint to call create_channel. Auto-creating would turn a
 * typo into a silent new channel nobody reads, and would have to guess the kind.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { AsField, requireSession } from './identity.js';
import { ChannelNameField } from './names.js';
import { parseInput } from './validate.js';

export const CHANNEL_KINDS = ['ordinary', 'memory'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export interface ChannelRow {
  /** The channel name; unique. */
  name: string;
  /** Fixed at creation; never changes. */
  kind: ChannelKind;
  /** The last seq handed out when the channel was created: all its messages have a higher seq. */
  created_seq: number;
  /** Every message of the channel with a lower seq has been evicted (0: none). */
  evicted_before_seq: number;
}

/** The channel row, or `not_found` naming `field` with a hint to create it. */
export function requireChannel(ctx: BusContext, name: string, field = 'channel'): ChannelRow {
  const row = ctx.db.get<ChannelRow>('SELECT name, kind, created_seq, evicted_before_seq FROM channels WHERE name = ?', [name]);
  if (row === undefined) {
    throw new BusError('not_found', `${field}: no channel "${name}"; create it with create_channel (kind ordinary or memory) or pick one from list_channels`, {
      field,
    });
  }
  return row;
}

/** The highest seq ever handed out (0 before the first message); never decreases, even after deletes. */
export function lastSeq(ctx: BusContext): number {
  return ctx.db.get<{ seq: number }>(ctx.db.capabilities.dialect.lastSeq)?.seq ?? 0;
}

// create_channel names the channel it makes `name` (a new channel, as the
// tool's documented input has it); every other operation refers to an
// existing channel as `channel`.
export const CreateChannelInput = v.strictObject({
  as: AsField,
  name: v.pipe(ChannelNameField, v.description('The new channel\'s name: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit.')),
  kind: v.optional(
    v.pipe(
      v.picklist(CHANNEL_KINDS, 'must be "ordinary" (chat messages) or "memory" (editable shared memories)'),
      v.description('"ordinary" (default: chat messages) or "memory" (shared notes, editable with edit_memory). Never changes later.'),
    ),
    'ordinary',
  ),
});
export type CreateChannelInput = v.InferInput<typeof CreateChannelInput>;

export const CreateChannelOutput = v.object({
  name: v.string(),
  kind: v.picklist(CHANNEL_KINDS),
  /** False when the channel already existed with this kind. */
  created: v.boolean(),
});
export type CreateChannelResult = v.InferOutput<typeof CreateChannelOutput>;

/** Creates a channel; idempotent for the same kind. Throws `conflict` if it exists with the other kind. */
export function createChannel(ctx: BusContext, rawInput: unknown): CreateChannelResult {
  const input = parseInput(CreateChannelInput, rawInput);
  return ctx.db.transaction(() => {
    requireSession(ctx, input.as);
    const existing = ctx.db.get<ChannelRow>('SELECT kind FROM channels WHERE name = ?', [input.name]);
    if (existing !== undefined) {
      if (existing.kind !== input.kind) {
        throw new BusError('conflict', `name: channel "${input.name}" already exists as a ${existing.kind} channel; a channel's kind never changes, so pick another name`, {
          field: 'name',
        });
      }
      return { name: input.name, kind: input.kind, created: false };
    }
    ctx.db.run('INSERT INTO channels (name, kind, created_seq, evicted_before_seq) VALUES (?, ?, ?, 0)', [
      input.name,
      input.kind,
      lastSeq(ctx),
    ]);
    ctx.log.info('channel created', { channel: input.name, kind: input.kind });
    return { name: input.name, kind: input.kind, created: true };
  });
}

export const ListChannelsInput = v.strictObject({ as: AsField });
export type ListChannelsInput = v.InferInput<typeof ListChannelsInput>;

export const ListChannelsOutput = v.object({
  channels: v.array(
    v.object({
      name: v.string(),
      kind: v.picklist(CHANNEL_KINDS),
      /** Stored messages that are not tombstoned: ordinary messages, or live memory revisions. */
      message_count: v.number(),
      /** The highest seq stored in the channel, or null when it has none. */
      latest_seq: v.nullable(v.number()),
      /** True when `as` is subscribed. */
      subscribed: v.boolean(),
    }),
  ),
});
export type ListChannelsResult = v.InferOutput<typeof ListChannelsOutput>;

/** Every channel, by name; not the reserved one direct messages are stored in. */
export function listChannels(ctx: BusContext, rawInput: unknown): ListChannelsResult {
  const input = parseInput(ListChannelsInput, rawInput);
  return ctx.db.read(() => {
    const { sender } = requireSession(ctx, input.as);
    const rows = ctx.db.all<{ name: string; kind: ChannelKind; message_count: number; latest_seq: number | null; subscribed: number }>(
      `SELECT c.name, c.kind,
              (SELECT count(*) FROM messages m WHERE m.channel = c.name AND m.tombstone = 0) AS message_count,
              (SELECT max(seq) FROM messages m WHERE m.channel = c.name) AS latest_seq,
              EXISTS (SELECT 1 FROM subscriptions s WHERE s.channel = c.name AND s.sender = ?) AS subscribed
         FROM channels c WHERE c.name <> ? ORDER BY c.name`,
      [sender, DIRECT_CHANNEL],
    );
    return { channels: rows.map((r) => ({ ...r, subscribed: r.subscribed === 1 })) };
  });
}

export const SubscribeInput = v.strictObject({
  as: AsField,
  channel: v.pipe(ChannelNameField, v.description('The channel to follow, e.g. "general" (chat) or "memory" (shared notes).')),
  from: v.optional(
    v.pipe(
      v.picklist(['now', 'oldest'], 'must be "now" (only new messages) or "oldest" (everything still stored)'),
      v.description('Default "now": only messages sent after this call (read older ones with history). "oldest": everything still stored. Ignored when already subscribed: your cursor is kept.'),
    ),
    'now',
  ),
});
export type SubscribeInput = v.InferInput<typeof SubscribeInput>;

export const SubscribeOutput = v.object({
  channel: v.string(),
  /** False when an existing subscription (and its cursor) was kept. */
  created: v.boolean(),
  /** The last seq considered delivered; receive returns messages after it. */
  cursor_seq: v.number(),
});
export type SubscribeResult = v.InferOutput<typeof SubscribeOutput>;

/**
 * Subscribes `as` to a channel. An existing subscription keeps its cursor
 * (`from` is then ignored) unless it had expired, which starts over.
 * Throws `not_found` for an unknown channel.
 */
export function subscribe(ctx: BusContext, rawInput: unknown): SubscribeResult {
  const input = parseInput(SubscribeInput, rawInput);
  return ctx.db.transaction(() => {
    const { sender } = requireSession(ctx, input.as);
    const channel = requireChannel(ctx, input.channel);
    const now = ctx.clock.now();
    const existing = ctx.db.get<{ cursor_seq: number; last_activity: number }>(
      'SELECT cursor_seq, last_activity FROM subscriptions WHERE sender = ? AND channel = ?',
      [sender, channel.name],
    );
    const expired = existing !== undefined && existing.last_activity < now - ctx.config.cursor_idle_hours * 3_600_000;
    if (existing !== undefined && !expired) return { channel: channel.name, created: false, cursor_seq: existing.cursor_seq };
    // `oldest` starts just before the first message that can still exist, so no gap is reported for history this subscriber never had.
    const cursor = input.from === 'now' ? lastSeq(ctx) : Math.max(channel.created_seq, channel.evicted_before_seq - 1, 0);
    ctx.db.run(
      `INSERT INTO subscriptions (sender, channel, cursor_seq, last_activity, pending_token, pending_end_seq)
       VALUES (?, ?, ?, ?, NULL, NULL)
       ON CONFLICT (sender, channel) DO UPDATE SET cursor_seq = excluded.cursor_seq, last_activity = excluded.last_activity,
         pending_token = NULL, pending_end_seq = NULL`,
      [sender, channel.name, cursor, now],
    );
    // A fresh subscription answers an earlier expiry; its notice would only confuse.
    ctx.db.run('DELETE FROM expired_subscriptions WHERE sender = ? AND channel = ?', [sender, channel.name]);
    return { channel: channel.name, created: true, cursor_seq: cursor };
  });
}

export const UnsubscribeInput = v.strictObject({ as: AsField, channel: v.pipe(ChannelNameField, v.description('The channel to stop following.')) });
export type UnsubscribeInput = v.InferInput<typeof UnsubscribeInput>;

export const UnsubscribeOutput = v.object({
  channel: v.string(),
  /** False when `as` was not subscribed. */
  removed: v.boolean(),
});
export type UnsubscribeResult = v.InferOutput<typeof UnsubscribeOutput>;

/** Drops the subscription, its cursor and any pending batch. Throws `not_found` for an unknown channel. */
export function unsubscribe(ctx: BusContext, rawInput: unknown): UnsubscribeResult {
  const input = parseInput(UnsubscribeInput, rawInput);
  return ctx.db.transaction(() => {
    const { sender } = requireSession(ctx, input.as);
    const channel = requireChannel(ctx, input.channel);
    const { changes } = ctx.db.run('DELETE FROM subscriptions WHERE sender = ? AND channel = ?', [sender, channel.name]);
    // Unsubscribing also drops a pending expiry notice for the channel: the sender no longer wants news of it.
    ctx.db.run('DELETE FROM expired_subscriptions WHERE sender = ? AND channel = ?', [sender, channel.name]);
    return { channel: channel.name, removed: changes > 0 };
  });
}
