/** Notices: conditions reported inside a successful result, never as errors. */
import * as v from 'valibot';

export const NOTICE_KINDS = ['gap', 'expired', 'capacity', 'ack_ignored', 'semantic_unavailable', 'reservation_taken'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

export const NoticeOutput = v.object({
  kind: v.picklist(NOTICE_KINDS),
  /** One sentence for the agent: what happened and what to do. */
  message: v.string(),
  /** The channel concerned, for `gap` and `expired`. */
  channel: v.optional(v.string()),
});
export type Notice = v.InferOutput<typeof NoticeOutput>;
