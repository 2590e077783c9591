/**
 * send: validate, replay a receipt if the key was seen, charge the rate
 * limit, run the inspection hook and make room (both before the write
 * transaction, since they are slow or async), then one write transaction:
 * re-check the session and the receipt, insert the row, store the receipt.
 * On a memory channel the row is the first revision of a new memory. With
 * `to` instead of `channel` it is a direct message (see direct-addressees.ts):
 * stored in the reserved channel "@direct" with one direct_recipients row per
 * addressee, through the same limits, hook, budget and receipts.
 */
import * as v from 'valibot';
import { triggerEmbeddingPass } from '../embeddings/embedding-pass.js';
import { inspect } from './inspect.js';
import { ensureCapacity } from './capacity-check.js';
import type { BusContext } from './bus-context.js';
import { wakeAfterCommit, wakeAtCommit } from './commit-wake.js';
import { lastSeq, requireChannel, type ChannelRow } from './channels.js';
import { checkAddressees, DIRECT_CHANNEL, ToField } from './direct-addressees.js';
import { storeRecipients } from './direct-recipients.js';
import { EnvelopeFields, envelopeColumns, measureEnvelope, toEnvelope, type Envelope } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { ChannelNameField } from './names.js';
import { findReceipt, IdempotencyKeyField, receiptFingerprint, storeReceipt } from './receipts.js';
import { invalid, parseInput } from './validate.js';

export const SendInput = v.strictObject({
  as: AsField,
  channel: v.optional(
    v.pipe(ChannelNameField, v.description('The channel to post to; on a memory channel the message becomes a new memory. Give either channel or to.')),
  ),
  to: v.optional(ToField),
  ...EnvelopeFields,
  idempotency_key: v.optional(
    v.pipe(IdempotencyKeyField, v.description('A key you choose (at most 256 characters): a retry with the same key and content returns the first result instead of posting twice.')),
  ),
});
export type SendInput = v.InferInput<typeof SendInput>;

export const SendOutput = v.object({
  seq: v.number(),
  /** Memory channels only: the new memory's ID (its first revision's seq). */
  memory_id: v.optional(v.number()),
  /** Memory channels only: always 1 for a send. */
  revision: v.optional(v.number()),
  /** Direct messages only: the addressees, as given; see message_status for how far each has read it. */
  to: v.optional(v.array(v.string())),
});
export type SendResult = v.InferOutput<typeof SendOutput>;

/**
 * Sends a message (on a memory channel: creates a memory). Throws
 * `validation`, `not_registered`, `not_found` (channel, or a `to` name never registered), `conflict`
 * (idempotency key reused for another payload), `rate_limited`,
 * `inspection_rejected`, `inspection_unavailable`, `capacity_exhausted`.
 */
export async function send(ctx: BusContext, rawInput: unknown): Promise<SendResult> {
  const input = parseInput(SendInput, rawInput);
  const envelope = toEnvelope(input);
  const { sender, context } = requireSession(ctx, input.as);
  const to = addressees(ctx, sender, input);
  const channel = requireChannel(ctx, to === undefined ? input.channel! : DIRECT_CHANNEL);
  // The inspection hook sees what a direct message is and whom it is for; the receipt fingerprint covers them too.
  const payload = to === undefined ? { channel: channel.name, ...envelope } : { channel: channel.name, direct: true, to, ...envelope };
  const key = input.idempotency_key;
  const fingerprint = key === undefined ? undefined : receiptFingerprint('send', payload);
  if (key !== undefined && fingerprint !== undefined) {
    const replay = findReceipt<SendResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return replay;
  }
  if (envelope.reply_to !== null && envelope.reply_to > lastSeq(ctx)) {
    throw invalid('reply_to', `no message has seq ${envelope.reply_to} yet; reply_to must be the seq of an existing message`);
  }
  // Size is measured against the time of the check; the stored row uses the commit time, whose ISO form has the same length.
  const bytes = measureEnvelope(ctx.config, { channel: channel.name, sender, context, createdAt: ctx.clock.now() }, envelope);
  const refund = ctx.rateLimiter?.charge(sender, bytes, ctx.clock.monotonic());
  try {
    await inspect(
      { command: ctx.config.inspection_command, timeoutSeconds: ctx.config.inspection_timeout_seconds, log: ctx.log },
      { operation: 'send', sender, payload },
    );
    ensureCapacity(ctx.db, ctx.config, ctx.clock.now(), bytes, { timer: () => ctx.clock.monotonic() });
    const outcome = ctx.db.transaction(() => {
      const written = write(ctx, input.as, { channel, to }, envelope, { bytes, context }, key, fingerprint);
      if (!written.replayed) wakeAtCommit(ctx.db, to);
      return written;
    });
    if (outcome.replayed) refund?.();
    else {
      ctx.log.debug('sent', { sender, channel: channel.name, seq: outcome.result.seq, bytes });
      // A direct message wakes only its addressees (and readers of every direct message), never the bystanders.
      wakeAfterCommit(ctx, to);
      // A new memory is made searchable by meaning right away, in the background; never part of the write.
      if (channel.kind === 'memory') triggerEmbeddingPass(ctx);
    }
    return outcome.result;
  } catch (error) {
    refund?.();
    throw error;
  }
}

/** The checked `to` of a direct send, or undefined for a channel send; exactly one of channel and to must be given. */
function addressees(ctx: BusContext, sender: string, input: v.InferOutput<typeof SendInput>): readonly string[] | undefined {
  if (input.to === undefined) {
    if (input.channel === undefined) throw invalid('channel', 'is required: a channel name (see list_channels), or give `to` to send to agents directly');
    return undefined;
  }
  if (input.channel !== undefined) {
    throw invalid('to', `give channel or to, not both: a direct message is stored apart from "${input.channel}" and reaches only its addressees`);
  }
  ctx.db.read(() => checkAddressees(ctx, sender, input.to!));
  return input.to;
}

function write(
  ctx: BusContext,
  as: string,
  target: { channel: ChannelRow; to: readonly string[] | undefined },
  envelope: Envelope,
  measured: { bytes: number; context: string },
  key: string | undefined,
  fingerprint: string | undefined,
): { result: SendResult; replayed: boolean } {
  const { db } = ctx;
  const { channel, to } = target;
  // The owner check must hold at commit; the channel cannot vanish except by reset, which also removes the session.
  const { sender, context } = requireSession(ctx, as);
  if (key !== undefined && fingerprint !== undefined) {
    const replay = findReceipt<SendResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return { result: replay, replayed: true };
  }
  // Names are never forgotten today; checked again at commit so that rule can change without a race here.
  if (to !== undefined) checkAddressees(ctx, sender, to);
  const now = ctx.clock.now();
  // An ISO timestamp has a fixed length, so only a context changed by a re-register alters the size.
  const bytes =
    context === measured.context ? measured.bytes : measureEnvelope(ctx.config, { channel: channel.name, sender, context, createdAt: now }, envelope);
  const columns = envelopeColumns(envelope);
  // RETURNING, not lastInsertRowid: both engines have it, and PostgreSQL has no rowid.
  const seq = (
    db.get<{ seq: number }>(
      `INSERT INTO messages (channel, sender, context, created_at, type, content, reply_to, metadata, refs, bytes, direct_to)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      [channel.name, sender, context, now, columns.type, columns.content, columns.reply_to, columns.metadata, columns.refs, bytes, to === undefined ? null : JSON.stringify(to)],
    ) as { seq: number }
  ).seq;
  let result: SendResult = { seq };
  if (channel.kind === 'memory') {
    db.run('UPDATE messages SET memory_id = seq, revision = 1 WHERE seq = ?', [seq]);
    result = { seq, memory_id: seq, revision: 1 };
  }
  if (to !== undefined) {
    storeRecipients(db, seq, to);
    result = { seq, to: [...to] };
  }
  if (key !== undefined && fingerprint !== undefined) storeReceipt(ctx, sender, key, fingerprint, result);
  return { result, replayed: false };
}
