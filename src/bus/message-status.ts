/**
 * message_status: how far each addressee of a direct message has got with it,
 * for its sender: unread (not yet in any receive), delivered (in a batch not
 * yet acknowledged) or acknowledged, and when. This tells "Sam2 has not
 * looked" from "Sam2 has it" without asking.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { DIRECT_STATES, recipientStates } from './direct-recipients.js';
import { SeqField } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { isoTime } from './time.js';
import { parseInput } from './validate.js';

export const MessageStatusInput = v.strictObject({
  as: AsField,
  seq: v.pipe(SeqField, v.description('The seq send returned for a direct message you sent.')),
});
export type MessageStatusInput = v.InferInput<typeof MessageStatusInput>;

export const MessageStatusOutput = v.object({
  seq: v.number(),
  /** One entry per addressee, in the order of the send's `to`. */
  to: v.array(
    v.object({
      name: v.string(),
      /** unread: not in any receive yet; delivered: received, not acknowledged; acknowledged. */
      state: v.picklist(DIRECT_STATES),
      /** ISO 8601 UTC of the latest delivery, or null while unread. */
      delivered_at: v.nullable(v.string()),
      /** ISO 8601 UTC of the acknowledgement, or null before it. */
      acknowledged_at: v.nullable(v.string()),
    }),
  ),
});
export type MessageStatusResult = v.InferOutput<typeof MessageStatusOutput>;

/**
 * The read state of direct message `seq` per addressee. Throws `validation`,
 * `not_registered`, `not_found` (no such message, not a direct message, or
 * sent by someone else: the state of others' mail is theirs).
 */
export function messageStatus(ctx: BusContext, rawInput: unknown): MessageStatusResult {
  const input = parseInput(MessageStatusInput, rawInput);
  return ctx.db.read(() => {
    const { sender } = requireSession(ctx, input.as);
    const row = ctx.db.get<{ sender: string }>('SELECT sender FROM messages WHERE seq = ? AND channel = ?', [input.seq, DIRECT_CHANNEL]);
    if (row === undefined || row.sender !== sender) {
      throw new BusError(
        'not_found',
        `seq: ${input.seq} is not a direct message you sent (or it was deleted by retention); pass the seq send returned when you sent with \`to\``,
        { field: 'seq' },
      );
    }
    return {
      seq: input.seq,
      to: recipientStates(ctx.db, input.seq).map((r) => ({
        name: r.addressee,
        state: r.state,
        delivered_at: r.delivered_at === null ? null : isoTime(r.delivered_at),
        acknowledged_at: r.acked_at === null ? null : isoTime(r.acked_at),
      })),
    };
  });
}
