/**
 * The one mapping from a `messages` row to the message shape every result
 * uses (receive, history, search, get_memory).
 */
import * as v from 'valibot';
import { REFERENCE_KINDS, type Reference } from './envelope.js';
import { isoTime } from './time.js';

/** The columns a message result needs; select them with MESSAGE_COLUMNS. */
export interface MessageRow {
  /** The global order and the message's only identifier. */
  seq: number;
  /** The channel it was sent to. */
  channel: string;
  /** The sender's display name at send time. */
  sender: string;
  /** The sender's context hint at send time. */
  context: string;
  /** Milliseconds since the epoch, set by the bus. */
  created_at: number;
  /** The caller's type label. */
  type: string;
  /** The message text. */
  content: string;
  /** The seq this answers, or null. */
  reply_to: number | null;
  /** JSON object of string values, or null for none. */
  metadata: string | null;
  /** JSON array of references, or null for none. */
  refs: string | null;
  /** The memory's ID on a memory revision, else null (null exactly when revision is). */
  memory_id: number | null;
  /** The revision number on a memory revision, else null. */
  revision: number | null;
  /** A direct message only: JSON array of its addressees in `to` order; null on every other message. */
  direct_to: string | null;
}

/**
 * The select list for MessageRow, for a table aliased `m`. A direct message's
 * addressees are a column of its own row (written once by send, in `to`
 * order), so a read needs no aggregate, whose spelling differs by engine.
 */
export const MESSAGE_COLUMNS = `m.seq, m.channel, m.sender, m.context, m.created_at, m.type, m.content, m.reply_to, m.metadata, m.refs, m.memory_id, m.revision, m.direct_to`;

export const MessageOutput = v.object({
  seq: v.number(),
  channel: v.string(),
  sender: v.string(),
  context: v.string(),
  /** ISO 8601 UTC. */
  created_at: v.string(),
  type: v.string(),
  content: v.string(),
  reply_to: v.nullable(v.number()),
  metadata: v.record(v.string(), v.string()),
  references: v.array(v.object({ kind: v.picklist(REFERENCE_KINDS), value: v.string() })),
  /** Memories only: the seq of the first revision. */
  memory_id: v.optional(v.number()),
  /** Memories only: 1 for the first revision, then 2, 3, ... */
  revision: v.optional(v.number()),
  /** Direct messages only: always true (their channel is "@direct"). */
  direct: v.optional(v.literal(true)),
  /** Direct messages only: the display names it was sent to, in the sender's order. */
  to: v.optional(v.array(v.string())),
});
export type Message = v.InferOutput<typeof MessageOutput>;

/** Maps a row to a message result; `memory_id`/`revision` appear only on memory revisions. */
export function toMessage(row: MessageRow): Message {
  const message: Message = {
    seq: row.seq,
    channel: row.channel,
    sender: row.sender,
    context: row.context,
    created_at: isoTime(row.created_at),
    type: row.type,
    content: row.content,
    reply_to: row.reply_to,
    metadata: row.metadata === null ? {} : (JSON.parse(row.metadata) as Record<string, string>),
    references: row.refs === null ? [] : (JSON.parse(row.refs) as Reference[]),
  };
  if (row.memory_id !== null && row.revision !== null) {
    message.memory_id = row.memory_id;
    message.revision = row.revision;
  }
  if (row.direct_to !== null) {
    message.direct = true;
    message.to = JSON.parse(row.direct_to) as string[];
  }
  return message;
}

/** Bytes a message takes in a result, for the result ceiling. */
export function messageBytes(message: Message): number {
  return Buffer.byteLength(JSON.stringify(message), 'utf8');
}

/** The fixed hard ceiling on any result, whatever the configuration. */
export const HARD_RESULT_CEILING_BYTES = 4 * 1024 * 1024;

/**
 * Takes messages in order while they fit `ceilingBytes`, whole records only.
 * If the first one alone is over the ceiling it is returned alone, so an
 * oversized record (possible when max_message_kib > result_default_kib)
 * never stalls a reader forever; the hard 4 MiB ceiling still applies.
 */
export function fitToCeiling(messages: readonly Message[], ceilingBytes: number): { messages: Message[]; truncated: boolean } {
  const out: Message[] = [];
  let used = 0;
  for (const message of messages) {
    const bytes = messageBytes(message);
    const ceiling = out.length === 0 ? Math.max(ceilingBytes, Math.min(bytes, HARD_RESULT_CEILING_BYTES)) : ceilingBytes;
    if (used + bytes > ceiling) return { messages: out, truncated: true };
    out.push(message);
    used += bytes;
  }
  return { messages: out, truncated: false };
}
