/**
 * A name's direct messages as one more entry beside its subscriptions in
 * what the inbox monitor reads (`channel: '@direct'`), so the inbox file and
 * the hooks carry them with no change of format: an older `agentbus inbox`
 * reading a newer file still reports them, under "@direct". Read-only; call
 * it inside a read transaction.
 */
import type { BusContext } from './bus-context.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { unreadDirect } from './unread.js';
import type { UnreadSubscription } from './unread.js';

/** `addressee`'s direct messages as an inbox entry, or undefined when none is unread or unacknowledged. */
export function directInboxEntry(ctx: Pick<BusContext, 'db'>, addressee: string): UnreadSubscription | undefined {
  const direct = unreadDirect(ctx, addressee);
  if (direct.unread === 0 && direct.unacked === 0) return undefined;
  let unacked: UnreadSubscription['unacked'];
  if (direct.unacked > 0) {
    // Direct messages are delivered in the receive's one batch: one token, the newest one when a batch was cut short and redelivered.
    const batch = ctx.db.get<{ token: string; n: number; end: number }>(
      `SELECT pending_token AS token, count(*) AS n, max(seq) AS end FROM direct_recipients
        WHERE addressee = ? AND state = 'delivered' AND pending_token IS NOT NULL
        GROUP BY pending_token ORDER BY max(delivered_at) DESC LIMIT 1`,
      [addressee],
    );
    if (batch !== undefined) unacked = { count: batch.n, batchToken: batch.token, endSeq: batch.end };
  }
  return { channel: DIRECT_CHANNEL, unread: direct.unread, unreadCapped: direct.unreadCapped, newest: direct.newest, unacked };
}

/** True for the inbox entry of direct messages. */
export function isDirectEntry(entry: { readonly channel: string }): boolean {
  return entry.channel === DIRECT_CHANNEL;
}
