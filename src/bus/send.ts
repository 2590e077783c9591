/**
 * send: validate, replay a receipt if the key was seen, charge the rate
 * limit, run the inspection hook and make room (both before the write
 * transaction, since they are slow or async), then one write transaction:
 * re-check the session and the receipt, insert the row, store the receipt.
 * On a memory channel the row is the first revision of a new memory.
 */
import * as v from 'valibot';
import { triggerEmbeddingPass } from '../embeddings/embedding-pass.js';
import { inspect } from './inspect.js';
import { ensureCapacity } from './capacity-check.js';
import type { BusContext } from './bus-context.js';
import { lastSeq, requireChannel, type ChannelRow } from './channels.js';
import { EnvelopeFields, envelopeColumns, measureEnvelope, toEnvelope, type Envelope } from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { ChannelNameField } from './names.js';
import { findReceipt, IdempotencyKeyField, receiptFingerprint, storeReceipt } from './receipts.js';
import { invalid, parseInput } from './validate.js';

export const SendInput = v.strictObject({
  as: AsField,
  channel: v.pipe(ChannelNameField, v.description('The channel to post to; on a memory channel the message becomes a new memory.')),
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
});
export type SendResult = v.InferOutput<typeof SendOutput>;

/**
 * Sends a message (on a memory channel: creates a memory). Throws
 * `validation`, `not_registered`, `not_found` (channel), `conflict`
 * (idempotency key reused for another payload), `rate_limited`,
 * `inspection_rejected`, `inspection_unavailable`, `capacity_exhausted`.
 */
export async function send(ctx: BusContext, rawInput: unknown): Promise<SendResult> {
  const input = parseInput(SendInput, rawInput);
  const envelope = toEnvelope(input);
  const { sender, context } = requireSession(ctx, input.as);
  const channel = requireChannel(ctx, input.channel);
  const payload = { channel: channel.name, ...envelope };
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
    const outcome = ctx.db.transaction(() => write(ctx, input.as, channel, envelope, { bytes, context }, key, fingerprint));
    if (outcome.replayed) refund?.();
    else {
      ctx.log.debug('sent', { sender, channel: channel.name, seq: outcome.result.seq, bytes });
      ctx.announce?.();
      // A new memory is made searchable by meaning right away, in the background; never part of the write.
      if (channel.kind === 'memory') triggerEmbeddingPass(ctx);
    }
    return outcome.result;
  } catch (error) {
    refund?.();
    throw error;
  }
}

function write(
  ctx: BusContext,
  as: string,
  channel: ChannelRow,
  envelope: Envelope,
  measured: { bytes: number; context: string },
  key: string | undefined,
  fingerprint: string | undefined,
): { result: SendResult; replayed: boolean } {
  const { db } = ctx;
  // The owner check must hold at commit; the channel cannot vanish except by reset, which also removes the session.
  const { sender, context } = requireSession(ctx, as);
  if (key !== undefined && fingerprint !== undefined) {
    const replay = findReceipt<SendResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return { result: replay, replayed: true };
  }
  const now = ctx.clock.now();
  // An ISO timestamp has a fixed length, so only a context changed by a re-register alters the size.
  const bytes =
    context === measured.context ? measured.bytes : measureEnvelope(ctx.config, { channel: channel.name, sender, context, createdAt: now }, envelope);
  const columns = envelopeColumns(envelope);
  // RETURNING, not lastInsertRowid: both engines have it, and PostgreSQL has no rowid.
  const seq = (
    db.get<{ seq: number }>(
      `INSERT INTO messages (channel, sender, context, created_at, type, content, reply_to, metadata, refs, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      [channel.name, sender, context, now, columns.type, columns.content, columns.reply_to, columns.metadata, columns.refs, bytes],
    ) as { seq: number }
  ).seq;
  let result: SendResult = { seq };
  if (channel.kind === 'memory') {
    db.run('UPDATE messages SET memory_id = seq, revision = 1 WHERE seq = ?', [seq]);
    result = { seq, memory_id: seq, revision: 1 };
  }
  if (key !== undefined && fingerprint !== undefined) storeReceipt(ctx, sender, key, fingerprint, result);
  return { result, replayed: false };
}
