/**
 * The message envelope shared by `send` and `edit_memory`: what a caller may
 * set (content, type, reply_to, metadata, references), how it is serialized,
 * and the `max_message_kib` limit on the complete serialized envelope
 * (including the fields the bus sets: channel, sender, context, created_at).
 *
 * Stable API: other operations import the field schemas, `toEnvelope`,
 * `measureEnvelope` and `envelopeColumns`.
 */
import * as v from 'valibot';
import type { Config } from '../config.js';
import { isoTime } from './time.js';
import { invalid } from './validate.js';

/** Schema bounds are generous static ceilings; the real limit is max_message_kib on the serialized envelope. */
export const CONTENT_MAX_CHARS = 1024 * 1024;
export const METADATA_MAX_ENTRIES = 64;
export const REFERENCES_MAX = 64;
export const DEFAULT_TYPE = 'message';
export const REFERENCE_KINDS = ['url', 'unix_path', 'windows_path'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

export const ContentField = v.pipe(
  v.string('must be a string: the message text'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(CONTENT_MAX_CHARS, `must be at most ${CONTENT_MAX_CHARS} characters (and the whole message at most max_message_kib)`),
);

export const TypeField = v.pipe(
  v.string('must be a string such as "message", "question" or "status"'),
  v.minLength(1, 'must not be empty; omit it for "message"'),
  v.maxLength(64, 'must be at most 64 characters'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._/+-]*$/, 'must start with a letter or digit and use only letters, digits and . _ / + - (e.g. "question")'),
);

/** A seq: the only message identifier. */
export const SeqField = v.pipe(
  v.number('must be a number: a message seq'),
  v.integer('must be a whole number: a message seq'),
  v.minValue(1, 'must be at least 1: a message seq'),
  v.maxValue(Number.MAX_SAFE_INTEGER, 'is too large for a seq'),
);

export const MetadataField = v.pipe(
  v.record(
    v.pipe(v.string(), v.minLength(1, 'keys must not be empty'), v.maxLength(128, 'keys must be at most 128 characters')),
    v.pipe(v.string('values must be strings'), v.maxLength(16 * 1024, 'values must be at most 16384 characters')),
    'must be an object of string keys to string values',
  ),
  v.maxEntries(METADATA_MAX_ENTRIES, `must have at most ${METADATA_MAX_ENTRIES} entries`),
);

export const ReferenceSchema = v.strictObject({
  kind: v.pipe(v.picklist(REFERENCE_KINDS, 'must be "url", "unix_path" or "windows_path"'), v.description('"url", "unix_path" or "windows_path".')),
  value: v.pipe(
    v.string('must be a string, kept verbatim'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(8192, 'must be at most 8192 characters'),
    v.description('The URL or path, kept verbatim (at most 8192 characters).'),
  ),
});
export type Reference = v.InferOutput<typeof ReferenceSchema>;

export const ReferencesField = v.pipe(
  v.array(ReferenceSchema, 'must be an array of {kind, value}'),
  v.maxLength(REFERENCES_MAX, `must have at most ${REFERENCES_MAX} entries`),
);

/** Spread into an operation's strictObject: the caller-settable envelope fields. */
export const EnvelopeFields = {
  content: v.pipe(ContentField, v.description('The message text. The whole message must fit max_message_kib (default 64 KiB).')),
  type: v.optional(v.pipe(TypeField, v.description('A short label such as "question" or "status"; default "message".')), DEFAULT_TYPE),
  reply_to: v.optional(v.pipe(SeqField, v.description('The seq of the message this answers; search\'s thread filter follows these links.'))),
  metadata: v.optional(v.pipe(MetadataField, v.description('String keys to string values (at most 64 entries), kept with the message.'))),
  references: v.optional(v.pipe(ReferencesField, v.description('Files or URLs the message is about (at most 64).'))),
};

/** The caller-settable part of a message, normalised: absent fields become null / {} / []. */
export interface Envelope {
  /** The message text. */
  readonly content: string;
  /** A short type label; `message` when the caller gave none. */
  readonly type: string;
  /** The seq this message answers, or null. */
  readonly reply_to: number | null;
  /** String keys to string values; {} when none. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Structured references kept verbatim, never dereferenced; [] when none. */
  readonly references: readonly Reference[];
}

/** Normalises parsed envelope fields. */
export function toEnvelope(input: {
  content: string;
  type: string;
  reply_to?: number | undefined;
  metadata?: Record<string, string> | undefined;
  references?: Reference[] | undefined;
}): Envelope {
  return {
    content: input.content,
    type: input.type,
    reply_to: input.reply_to ?? null,
    metadata: input.metadata ?? {},
    references: input.references ?? [],
  };
}

/** The fields the bus sets on every message. */
export interface EnvelopeOrigin {
  /** The channel written to. */
  readonly channel: string;
  /** The sender's display name. */
  readonly sender: string;
  /** The sender's context hint. */
  readonly context: string;
  /** Milliseconds since the epoch, from the bus clock. */
  readonly createdAt: number;
}

/** The complete serialized envelope, the unit `max_message_kib` limits and `bytes` records. */
export function serializeEnvelope(origin: EnvelopeOrigin, envelope: Envelope): string {
  return JSON.stringify({
    channel: origin.channel,
    sender: origin.sender,
    context: origin.context,
    created_at: isoTime(origin.createdAt),
    type: envelope.type,
    content: envelope.content,
    reply_to: envelope.reply_to,
    metadata: envelope.metadata,
    references: envelope.references,
  });
}

/**
 * The serialized envelope's size in bytes; throws `validation` when it
 * exceeds `max_message_kib`, naming the largest caller field and the limit.
 */
export function measureEnvelope(config: Config, origin: EnvelopeOrigin, envelope: Envelope): number {
  const bytes = Buffer.byteLength(serializeEnvelope(origin, envelope), 'utf8');
  const limit = config.max_message_kib * 1024;
  if (bytes > limit) {
    const sizes: [string, number][] = [
      ['content', Buffer.byteLength(envelope.content)],
      ['metadata', Buffer.byteLength(JSON.stringify(envelope.metadata))],
      ['references', Buffer.byteLength(JSON.stringify(envelope.references))],
    ];
    sizes.sort((a, b) => b[1] - a[1]);
    const field = sizes[0]![0];
    throw invalid(
      field,
      `the message is ${bytes} bytes serialized, over the max_message_kib limit of ${config.max_message_kib} KiB (${limit} bytes); shorten ${field} or split the message`,
    );
  }
  return bytes;
}

/** The envelope as `messages` columns. */
export function envelopeColumns(envelope: Envelope): {
  type: string;
  content: string;
  reply_to: number | null;
  metadata: string | null;
  refs: string | null;
} {
  return {
    type: envelope.type,
    content: envelope.content,
    reply_to: envelope.reply_to,
    metadata: Object.keys(envelope.metadata).length === 0 ? null : JSON.stringify(envelope.metadata),
    refs: envelope.references.length === 0 ? null : JSON.stringify(envelope.references),
  };
}
