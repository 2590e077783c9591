/**
 * What a name has not read yet, per subscription, without touching anything:
 * the messages after the delivered end (the cursor, or the end of the
 * unacknowledged batch), own and tombstoned messages excluded as receive
 * excludes them, and the unacknowledged batch apart. The inbox monitor of
 * `agentbus mcp` turns this into the inbox file hooks read and into channel
 * pushes. Call it inside a read (or write) transaction.
 */
import type { BusContext } from './bus-context.js';
import { deliverableAfter } from './deliverable.js';

/** Counting stops here: a nudge says "1000+" rather than scanning a huge backlog on every commit. */
export const UNREAD_COUNT_CAP = 1000;

export interface UnreadMessage {
  /** The message's seq. */
  readonly seq: number;
  /** Its sender's display name. */
  readonly sender: string;
  /** Its full content; callers shorten it (see previewText). */
  readonly content: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
}

export interface UnreadSubscription {
  /** The subscribed channel. */
  readonly channel: string;
  /** Messages not yet delivered, at most UNREAD_COUNT_CAP. */
  readonly unread: number;
  /** True when there are more than `unread`. */
  readonly unreadCapped: boolean;
  /** The newest undelivered message, when `unread` > 0. */
  readonly newest: UnreadMessage | undefined;
  /** The delivered but unacknowledged batch on this channel, when one holds surviving messages. */
  readonly unacked: { readonly count: number; readonly batchToken: string; readonly endSeq: number } | undefined;
}

interface SubRow {
  channel: string;
  cursor_seq: number;
  pending_token: string | null;
  pending_end_seq: number | null;
}

/** The unexpired subscriptions of `sender`, by channel name, each with what it has not read. */
export function unreadSummary(ctx: Pick<BusContext, 'db' | 'config' | 'clock'>, sender: string): UnreadSubscription[] {
  const { db } = ctx;
  const idleBefore = ctx.clock.now() - ctx.config.cursor_idle_hours * 3_600_000;
  const subs = db.all<SubRow>(
    'SELECT channel, cursor_seq, pending_token, pending_end_seq FROM subscriptions WHERE sender = ? AND last_activity >= ? ORDER BY channel',
    [sender, idleBefore],
  );
  return subs.map((sub) => {
    const deliveredEnd = Math.max(sub.cursor_seq, sub.pending_end_seq ?? sub.cursor_seq);
    const after = deliverableAfter(sub.channel, deliveredEnd, sender);
    const counted =
      db.get<{ n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM messages m WHERE ${after.sql} LIMIT ${UNREAD_COUNT_CAP + 1}) AS capped`, after.params)?.n ?? 0;
    const newestRow =
      counted === 0
        ? undefined
        : db.get<{ seq: number; sender: string; content: string; created_at: number }>(
            `SELECT m.seq, m.sender, m.content, m.created_at FROM messages m WHERE ${after.sql} ORDER BY m.seq DESC LIMIT 1`,
            after.params,
          );
    let unacked: UnreadSubscription['unacked'];
    if (sub.pending_token !== null && sub.pending_end_seq !== null) {
      const batch = deliverableAfter(sub.channel, sub.cursor_seq, sender, { upTo: sub.pending_end_seq });
      const count = db.get<{ n: number }>(`SELECT count(*) AS n FROM messages m WHERE ${batch.sql}`, batch.params)?.n ?? 0;
      if (count > 0) unacked = { count, batchToken: sub.pending_token, endSeq: sub.pending_end_seq };
    }
    return {
      channel: sub.channel,
      unread: Math.min(counted, UNREAD_COUNT_CAP),
      unreadCapped: counted > UNREAD_COUNT_CAP,
      newest:
        newestRow === undefined ? undefined : { seq: newestRow.seq, sender: newestRow.sender, content: newestRow.content, createdAt: newestRow.created_at },
      unacked,
    };
  });
}

/** At most `max` characters of `content` on one line: control characters and runs of white space become one space. */
export function previewText(content: string, max = 160): string {
  const flat = content.replace(/[\u0000-\u001f\u007f-\u009f\s]+/gu, ' ').trim();
  if (flat.length <= max) return flat;
  // Never cut a surrogate pair in half.
  let cut = max - 1;
  const code = flat.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return `${flat.slice(0, cut)}…`;
}

export interface UnreadDirect {
  /** Direct messages to the name not yet delivered, at most UNREAD_COUNT_CAP. */
  readonly unread: number;
  /** True when there are more than `unread`. */
  readonly unreadCapped: boolean;
  /** The newest undelivered direct message, when `unread` > 0. */
  readonly newest: UnreadMessage | undefined;
  /** Direct messages delivered to the name but not acknowledged. */
  readonly unacked: number;
}

/** What `addressee` has not read of its direct messages (sql/0012), without touching anything. Call it inside a read. */
export function unreadDirect(ctx: Pick<BusContext, 'db'>, addressee: string): UnreadDirect {
  const { db } = ctx;
  const counted =
    db.get<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM direct_recipients d WHERE d.addressee = ? AND d.state = 'unread' LIMIT ${UNREAD_COUNT_CAP + 1}) AS capped`,
      [addressee],
    )?.n ?? 0;
  const newest =
    counted === 0
      ? undefined
      : db.get<{ seq: number; sender: string; content: string; created_at: number }>(
          `SELECT m.seq, m.sender, m.content, m.created_at FROM direct_recipients d JOIN messages m ON m.seq = d.seq
            WHERE d.addressee = ? AND d.state = 'unread' ORDER BY d.seq DESC LIMIT 1`,
          [addressee],
        );
  const unacked = db.get<{ n: number }>(`SELECT count(*) AS n FROM direct_recipients d WHERE d.addressee = ? AND d.state = 'delivered'`, [addressee])?.n ?? 0;
  return {
    unread: Math.min(counted, UNREAD_COUNT_CAP),
    unreadCapped: counted > UNREAD_COUNT_CAP,
    newest: newest === undefined ? undefined : { seq: newest.seq, sender: newest.sender, content: newest.content, createdAt: newest.created_at },
    unacked,
  };
}
