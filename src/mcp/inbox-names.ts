/**
 * One look of the inbox monitor: every name this process holds with what it
 * has not read (its direct messages first, then its subscriptions), and the
 * inbox file made from it.
 */
import type { BusContext } from '../bus/bus-context.js';
import { directInboxEntry } from '../bus/direct-inbox-entry.js';
import { isoTime } from '../bus/time.js';
import { previewText, unreadSummary, type UnreadSubscription } from '../bus/unread.js';
import type { InboxFile } from '../harness/inbox-file.js';

/** Characters of the newest message kept in the inbox file. */
const INBOX_PREVIEW_CHARACTERS = 160;

/** A name this process holds, as one look found it. */
export interface NameState {
  readonly name: string;
  /** The '@direct' entry first when the name has direct messages unread or unacknowledged, then every subscription by channel. */
  readonly subscriptions: readonly UnreadSubscription[];
}

/** Every name `ctx`'s process holds, by name, in one read transaction. */
export function readNames(ctx: BusContext): NameState[] {
  return ctx.db.read(() =>
    ctx.db.all<{ sender: string }>('SELECT sender FROM sessions WHERE owner = ? ORDER BY sender', [ctx.owner]).map(({ sender }) => {
      const direct = directInboxEntry(ctx, sender);
      const channels = unreadSummary(ctx, sender);
      return { name: sender, subscriptions: direct === undefined ? channels : [direct, ...channels] };
    }),
  );
}

/** The inbox file for `names`, written by `server` for `harness` (identities as text). */
export function toInboxFile(server: string, harness: string, names: readonly NameState[]): InboxFile {
  return {
    version: 1,
    server,
    harness,
    names: names.map(({ name, subscriptions }) => ({
      name,
      subscriptions: subscriptions.map((s) => ({
        channel: s.channel,
        unread: s.unread,
        unread_capped: s.unreadCapped,
        newest:
          s.newest === undefined
            ? null
            : { seq: s.newest.seq, sender: s.newest.sender, preview: previewText(s.newest.content, INBOX_PREVIEW_CHARACTERS), created_at: isoTime(s.newest.createdAt) },
        unacked: s.unacked === undefined ? null : { count: s.unacked.count, batch_token: s.unacked.batchToken },
      })),
    })),
  };
}
