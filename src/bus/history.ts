/**
 * history: read a channel's stored messages without touching any cursor.
 *
 * Messages always come back oldest first (ascending seq), like a chat log.
 * Which messages: with `after`, the oldest `count` above it; with `before`,
 * the newest `count` below it; with neither, the newest `count`. When the
 * result ceiling cuts the page, the messages farthest from the anchor are the
 * ones left out, and `has_more` is true; page on with `after` = the last seq
 * (reading forward) or `before` = the first seq (reading back). Own messages
 * are included; tombstoned memory revisions are not.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { requireChannel } from './channels.js';
import { SeqField } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { fitToCeiling, HARD_RESULT_CEILING_BYTES, MESSAGE_COLUMNS, MessageOutput, toMessage, type MessageRow } from './message-row.js';
import { ChannelNameField } from './names.js';
import { invalid, parseInput } from './validate.js';

export const HistoryInput = v.strictObject({
  as: AsField,
  channel: v.pipe(ChannelNameField, v.description('The channel to read; you need not be subscribed.')),
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

/** Reads a page of a channel. Throws `validation` (both before and after; count above receive_max_count), `not_registered`, `not_found`. */
export function history(ctx: BusContext, rawInput: unknown): HistoryResult {
  const input = parseInput(HistoryInput, rawInput);
  if (input.before !== undefined && input.after !== undefined) {
    throw invalid('before', 'give either before or after, not both');
  }
  if (input.count !== undefined && input.count > ctx.config.receive_max_count) {
    throw invalid('count', `must be at most receive_max_count (${ctx.config.receive_max_count}); got ${input.count}`);
  }
  const count = input.count ?? ctx.config.receive_default_count;
  const ceiling = Math.min(ctx.config.result_default_kib * 1024, HARD_RESULT_CEILING_BYTES);
  return ctx.db.read(() => {
    requireSession(ctx, input.as);
    const channel = requireChannel(ctx, input.channel);
    const forward = input.after !== undefined;
    const rows = forward
      ? ctx.db.all<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.channel = ? AND m.seq > ? AND m.tombstone = 0 ORDER BY m.seq LIMIT ?`,
          [channel.name, input.after!, count + 1],
        )
      : ctx.db.all<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.channel = ? AND m.seq < ? AND m.tombstone = 0 ORDER BY m.seq DESC LIMIT ?`,
          [channel.name, input.before ?? Number.MAX_SAFE_INTEGER, count + 1],
        );
    // Rows are in reading order away from the anchor; fit from the anchor outwards.
    const more = rows.length > count;
    const fitted = fitToCeiling(rows.slice(0, count).map(toMessage), ceiling);
    const messages = forward ? fitted.messages : fitted.messages.reverse();
    return { messages, has_more: more || fitted.truncated };
  });
}
