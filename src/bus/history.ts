/**
 * history: read a channel's stored messages without touching any cursor.
 *
 * Messages always come back oldest first (ascending seq), like a chat log.
 * Which messages: with `after`, the oldest `count` above it; with `before`,
 * the newest `count` below it; with neither, the newest `count`. When the
 * result ceiling cuts the page, the messages farthest from the anchor are the
 * ones left out, and `has_more` is true; page on with `after` = the last seq
 * (reading forward) or `before` = the first seq (reading back). Own messages
 * are included; tombstoned memory revisions are not. With `direct: true`
 * instead of a channel: the caller's direct messages, sent or received (only
 * their sender and addressees ever see them), optionally only those `with` one peer.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { requireChannel } from './channels.js';
import { SeqField } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { fitToCeiling, HARD_RESULT_CEILING_BYTES, MESSAGE_COLUMNS, MessageOutput, toMessage, type MessageRow } from './message-row.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { directVisibleTo } from './direct-recipients.js';
import { ChannelNameField, DisplayNameField } from './names.js';
import { invalid, parseInput } from './validate.js';

export const HistoryInput = v.strictObject({
  as: AsField,
  channel: v.optional(v.pipe(ChannelNameField, v.description('The channel to read; you need not be subscribed. Give channel, or direct: true.'))),
  direct: v.optional(
    v.pipe(v.literal(true, 'must be true (or left out to read a channel)'), v.description('true: read your direct messages (sent by you or to you) instead of a channel.')),
  ),
  with: v.optional(v.pipe(DisplayNameField, v.description('With direct: true, only the direct messages between you and this display name.'))),
  before: v.optional(v.pipe(SeqField, v.description('Messages with a lower seq (default: the newest). Give before or after, not both.'))),
  after: v.optional(
    v.pipe(
      v.number('must be a number: a message seq'),
      v.integer('must be a whole number'),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(Number.MAX_SAFE_INTEGER, 'is too large for a seq'),
      v.description('Messages with a higher seq, from the oldest (0: from the start).'),
    ),
  ),
  count: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(10_000, 'must be at most receive_max_count (never above 10000)'),
      v.description('How many messages (default 100, at most 1000 unless configured otherwise).'),
    ),
  ),
});
export type HistoryInput = v.InferInput<typeof HistoryInput>;

export const HistoryOutput = v.object({
  /** Oldest first. */
  messages: v.array(MessageOutput),
  /** True when more messages exist beyond this page in the direction read. */
  has_more: v.boolean(),
});
export type HistoryResult = v.InferOutput<typeof HistoryOutput>;

/** The direct messages `reader` sent or was sent, or with `peer` only those between the two. */
function directOf(reader: string, peer: string | undefined): { sql: string; params: string[] } {
  const visible = directVisibleTo(reader);
  const addressed = 'EXISTS (SELECT 1 FROM direct_recipients p WHERE p.seq = m.seq AND p.addressee = ?)';
  if (peer === undefined) return { sql: `m.channel = '${DIRECT_CHANNEL}' AND ${visible.sql}`, params: visible.params };
  return {
    sql: `m.channel = '${DIRECT_CHANNEL}' AND ((m.sender = ? AND ${addressed}) OR (m.sender = ? AND ${addressed}))`,
    params: [reader, peer, peer, reader],
  };
}

/** Reads a page of a channel, or of the caller's direct messages. Throws `validation` (both before and after; count above receive_max_count), `not_registered`, `not_found`. */
export function history(ctx: BusContext, rawInput: unknown): HistoryResult {
  const input = parseInput(HistoryInput, rawInput);
  if (input.before !== undefined && input.after !== undefined) {
    throw invalid('before', 'give either before or after, not both');
  }
  if (input.count !== undefined && input.count > ctx.config.receive_max_count) {
    throw invalid('count', `must be at most receive_max_count (${ctx.config.receive_max_count}); got ${input.count}`);
  }
  if ((input.channel === undefined) === (input.direct === undefined)) {
    throw invalid(input.channel === undefined ? 'channel' : 'direct', 'give either channel (a channel name) or direct: true (your direct messages), not both or neither');
  }
  if (input.with !== undefined && input.direct === undefined) throw invalid('with', 'only goes with direct: true');
  const count = input.count ?? ctx.config.receive_default_count;
  const ceiling = Math.min(ctx.config.result_default_kib * 1024, HARD_RESULT_CEILING_BYTES);
  return ctx.db.read(() => {
    const { sender } = requireSession(ctx, input.as);
    const which = input.channel === undefined ? directOf(sender, input.with) : { sql: 'm.channel = ?', params: [requireChannel(ctx, input.channel).name] };
    const forward = input.after !== undefined;
    const rows = forward
      ? ctx.db.all<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${which.sql} AND m.seq > ? AND m.tombstone = 0 ORDER BY m.seq ${ctx.db.capabilities.dialect.limit}`,
          [...which.params, input.after!, count + 1],
        )
      : ctx.db.all<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${which.sql} AND m.seq < ? AND m.tombstone = 0 ORDER BY m.seq DESC ${ctx.db.capabilities.dialect.limit}`,
          [...which.params, input.before ?? Number.MAX_SAFE_INTEGER, count + 1],
        );
    // Rows are in reading order away from the anchor; fit from the anchor outwards.
    const more = rows.length > count;
    const fitted = fitToCeiling(rows.slice(0, count).map(toMessage), ceiling);
    const messages = forward ? fitted.messages : fitted.messages.reverse();
    return { messages, has_more: more || fitted.truncated };
  });
}
