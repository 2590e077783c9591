/**
 * Memories: get_memory, edit_memory, delete_memory.
 *
 * A memory is a chain of revision rows sharing `memory_id` (the seq of its
 * first revision); at most one is live (tombstone = 0). An edit tombstones
 * the live revision and inserts the next in one write transaction, so edits
 * serialize and the last committed write wins; its result names the revision
 * it replaced, so a caller can notice it overwrote an edit it never saw.
 * A delete tombstones the live revision and inserts nothing.
 *
 * Mutations follow send's order: validate, replay a receipt, charge the rate
 * limit, run the inspection hook and make room (slow or async, so before the
 * transaction), then one write transaction that re-checks everything it
 * depends on. After a commit a best-effort embedding pass starts in the
 * background; it never delays or fails the mutation.
 */
import * as v from 'valibot';
import { triggerEmbeddingPass } from '../embeddings/embedding-pass.js';
import { inspect } from './inspect.js';
import { ensureCapacity } from './capacity-check.js';
import type { BusContext } from './bus-context.js';
import { lastSeq } from './channels.js';
import {
  ContentField,
  envelopeColumns,
  measureEnvelope,
  MetadataField,
  ReferencesField,
  SeqField,
  TypeField,
  type Envelope,
  type Reference,
} from './envelope.js';
import { AsField, requireSession } from './identity.js';
import { nextRevision, requireLiveRevision, type LiveRevision } from './memory-revision.js';
import { MessageOutput, toMessage, type Message } from './message-row.js';
import { findReceipt, IdempotencyKeyField, receiptFingerprint, storeReceipt } from './receipts.js';
import { invalid, parseInput } from './validate.js';

export const MemoryIdField = v.pipe(SeqField, v.description('The memory\'s memory_id (the seq of its first revision).'));

export const GetMemoryInput = v.strictObject({ as: AsField, memory_id: MemoryIdField });
export type GetMemoryInput = v.InferInput<typeof GetMemoryInput>;

/** The live revision as a message (with memory_id and revision). */
export const GetMemoryOutput = MessageOutput;
export type GetMemoryResult = Message;

/** The current live revision of a memory. Throws `validation`, `not_registered`, `not_found` (never existed, or deleted). */
export function getMemory(ctx: BusContext, rawInput: unknown): GetMemoryResult {
  const input = parseInput(GetMemoryInput, rawInput);
  return ctx.db.read(() => {
    requireSession(ctx, input.as);
    return toMessage(requireLiveRevision(ctx, input.memory_id));
  });
}

/**
 * edit_memory: `content` replaces the text; `type`, `reply_to`, `metadata`
 * and `references` replace the current revision's values when given and are
 * carried over when omitted (so fixing a typo does not drop metadata).
 */
export const EditMemoryInput = v.strictObject({
  as: AsField,
  memory_id: MemoryIdField,
  content: v.pipe(ContentField, v.description('The new text, replacing the old (the whole message must fit max_message_kib, default 64 KiB).')),
  type: v.optional(v.pipe(TypeField, v.description('A new label; omitted: the current revision\'s is kept.'))),
  reply_to: v.optional(v.pipe(SeqField, v.description('A new reply_to seq; omitted: kept.'))),
  metadata: v.optional(v.pipe(MetadataField, v.description('New metadata, replacing the old (at most 64 entries); omitted: kept.'))),
  references: v.optional(v.pipe(ReferencesField, v.description('New references, replacing the old (at most 64); omitted: kept.'))),
  idempotency_key: v.optional(v.pipe(IdempotencyKeyField, v.description('A key you choose (at most 256 characters): a retry with the same key returns the first result instead of editing twice.'))),
});
export type EditMemoryInput = v.InferInput<typeof EditMemoryInput>;

export const EditMemoryOutput = v.object({
  memory_id: v.number(),
  /** The seq of the new revision's row. */
  seq: v.number(),
  /** The new revision number. */
  revision: v.number(),
  /** The revision this edit tombstoned: the one that was live when the edit committed. */
  replaced_revision: v.number(),
  /** The seq of the replaced revision's row. */
  replaced_seq: v.number(),
});
export type EditMemoryResult = v.InferOutput<typeof EditMemoryOutput>;

type ParsedEdit = v.InferOutput<typeof EditMemoryInput>;

/** The new revision's envelope: the edit's fields over the live revision's. */
function mergedEnvelope(live: LiveRevision, input: ParsedEdit): Envelope {
  return {
    content: input.content,
    type: input.type ?? live.type,
    reply_to: input.reply_to !== undefined ? input.reply_to : live.reply_to,
    metadata: input.metadata ?? (live.metadata === null ? {} : (JSON.parse(live.metadata) as Record<string, string>)),
    references: input.references ?? (live.refs === null ? [] : (JSON.parse(live.refs) as Reference[])),
  };
}

/**
 * After an edit or a delete committed: a replay gives its rate-limit charge back; a write is
 * logged, rings the bell (so tail and the web console see it at once, not at their poll) and
 * starts an embedding pass.
 */
function afterCommit<R extends { revision: number }>(
  ctx: BusContext,
  outcome: { result: R; replayed: boolean },
  refund: (() => void) | undefined,
  what: string,
  fields: Record<string, unknown>,
): R {
  if (outcome.replayed) {
    refund?.();
  } else {
    ctx.log.debug(what, { ...fields, revision: outcome.result.revision });
    ctx.announce?.();
    triggerEmbeddingPass(ctx);
  }
  return outcome.result;
}

/**
 * Replaces a memory's live revision with a new one written by `as`.
 * Throws `validation`, `not_registered`, `not_found` (no live revision),
 * `conflict` (idempotency key reused for another payload), `rate_limited`,
 * `inspection_rejected`, `inspection_unavailable`, `capacity_exhausted`.
 */
export async function editMemory(ctx: BusContext, rawInput: unknown): Promise<EditMemoryResult> {
  const input = parseInput(EditMemoryInput, rawInput);
  const { sender, context } = requireSession(ctx, input.as);
  const { as: _as, idempotency_key: key, ...payload } = input;
  const fingerprint = receiptFingerprint('edit_memory', payload);
  if (key !== undefined) {
    const replay = findReceipt<EditMemoryResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return replay;
  }
  const live = requireLiveRevision(ctx, input.memory_id);
  if (input.reply_to !== undefined && input.reply_to > lastSeq(ctx)) {
    throw invalid('reply_to', `no message has seq ${input.reply_to} yet; reply_to must be the seq of an existing message`);
  }
  const envelope = mergedEnvelope(live, input);
  const bytes = measureEnvelope(ctx.config, { channel: live.channel, sender, context, createdAt: ctx.clock.now() }, envelope);
  const refund = ctx.rateLimiter?.charge(sender, bytes, ctx.clock.monotonic());
  try {
    await inspect(
      { command: ctx.config.inspection_command, timeoutSeconds: ctx.config.inspection_timeout_seconds, log: ctx.log },
      { operation: 'edit_memory', sender, payload: { memory_id: input.memory_id, channel: live.channel, ...envelope } },
    );
    ensureCapacity(ctx.db, ctx.config, ctx.clock.now(), bytes, { timer: () => ctx.clock.monotonic() });
    const outcome = ctx.db.transaction(() => writeEdit(ctx, input, key, fingerprint));
    return afterCommit(ctx, outcome, refund, 'memory edited', { sender, memory_id: input.memory_id });
  } catch (error) {
    refund?.();
    throw error;
  }
}

function writeEdit(
  ctx: BusContext,
  input: ParsedEdit,
  key: string | undefined,
  fingerprint: string,
): { result: EditMemoryResult; replayed: boolean } {
  const { db } = ctx;
  const { sender, context } = requireSession(ctx, input.as);
  if (key !== undefined) {
    const replay = findReceipt<EditMemoryResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return { result: replay, replayed: true };
  }
  // Whatever is live now is what this edit replaces: last committed write wins.
  const live = requireLiveRevision(ctx, input.memory_id);
  const envelope = mergedEnvelope(live, input);
  const now = ctx.clock.now();
  const bytes = measureEnvelope(ctx.config, { channel: live.channel, sender, context, createdAt: now }, envelope);
  const columns = envelopeColumns(envelope);
  const revision = nextRevision(ctx, live.memory_id);
  db.run('UPDATE messages SET tombstone = 1, tombstone_at = ? WHERE seq = ?', [now, live.seq]);
  // RETURNING, not lastInsertRowid: both engines have it, and PostgreSQL has no rowid.
  const inserted = db.get<{ seq: number }>(
    `INSERT INTO messages (channel, sender, context, created_at, type, content, reply_to, metadata, refs, memory_id, revision, bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    [
      live.channel,
      sender,
      context,
      now,
      columns.type,
      columns.content,
      columns.reply_to,
      columns.metadata,
      columns.refs,
      live.memory_id,
      revision,
      bytes,
    ],
  );
  const seq = (inserted as { seq: number }).seq;
  const result: EditMemoryResult = {
    memory_id: live.memory_id,
    seq,
    revision,
    replaced_revision: live.revision,
    replaced_seq: live.seq,
  };
  if (key !== undefined) storeReceipt(ctx, sender, key, fingerprint, result);
  return { result, replayed: false };
}

export const DeleteMemoryInput = v.strictObject({
  as: AsField,
  memory_id: MemoryIdField,
  idempotency_key: v.optional(v.pipe(IdempotencyKeyField, v.description('A key you choose (at most 256 characters): a retry with the same key returns the first result.'))),
});
export type DeleteMemoryInput = v.InferInput<typeof DeleteMemoryInput>;

export const DeleteMemoryOutput = v.object({
  memory_id: v.number(),
  /** The seq of the revision that was live and is now tombstoned. */
  seq: v.number(),
  /** The revision number that was live and is now tombstoned. */
  revision: v.number(),
});
export type DeleteMemoryResult = v.InferOutput<typeof DeleteMemoryOutput>;

/**
 * Tombstones a memory's live revision; nothing new is inserted, so
 * subscribers past the last revision learn of the deletion only through
 * get_memory. Makes no capacity check: deleting is how a full budget is
 * relieved. Throws `validation`, `not_registered`, `not_found`, `conflict`,
 * `rate_limited`, `inspection_rejected`, `inspection_unavailable`.
 */
export async function deleteMemory(ctx: BusContext, rawInput: unknown): Promise<DeleteMemoryResult> {
  const input = parseInput(DeleteMemoryInput, rawInput);
  const { sender } = requireSession(ctx, input.as);
  const key = input.idempotency_key;
  const fingerprint = receiptFingerprint('delete_memory', { memory_id: input.memory_id });
  if (key !== undefined) {
    const replay = findReceipt<DeleteMemoryResult>(ctx, sender, key, fingerprint);
    if (replay !== undefined) return replay;
  }
  const live = requireLiveRevision(ctx, input.memory_id);
  const refund = ctx.rateLimiter?.charge(sender, 0, ctx.clock.monotonic());
  try {
    await inspect(
      { command: ctx.config.inspection_command, timeoutSeconds: ctx.config.inspection_timeout_seconds, log: ctx.log },
      { operation: 'delete_memory', sender, payload: { memory_id: input.memory_id, channel: live.channel } },
    );
    const outcome = ctx.db.transaction(() => {
      requireSession(ctx, input.as);
      if (key !== undefined) {
        const replay = findReceipt<DeleteMemoryResult>(ctx, sender, key, fingerprint);
        if (replay !== undefined) return { result: replay, replayed: true };
      }
      const current = requireLiveRevision(ctx, input.memory_id);
      ctx.db.run('UPDATE messages SET tombstone = 1, tombstone_at = ? WHERE seq = ?', [ctx.clock.now(), current.seq]);
      const result: DeleteMemoryResult = { memory_id: current.memory_id, seq: current.seq, revision: current.revision };
      if (key !== undefined) storeReceipt(ctx, sender, key, fingerprint, result);
      return { result, replayed: false };
    });
    return afterCommit(ctx, outcome, refund, 'memory deleted', { sender, memory_id: input.memory_id });
  } catch (error) {
    refund?.();
    throw error;
  }
}

