/**
 * The Claude Code channel event agentbus pushes when new messages arrive for
 * a name this server holds: `notifications/claude/channel` with `content`
 * (who wrote on which channel, a bounded preview, what to call) and `meta`
 * (string attributes; Claude Code shows them on the `<channel>` tag and
 * drops keys that are not identifiers). It is a wake-up hint only: the
 * message is still read with receive and acknowledged with its batch token.
 */
import { previewText, type UnreadSubscription } from '../bus/unread.js';

/** The notification method Claude Code listens to on servers declaring the capability. */
export const CHANNEL_NOTIFICATION_METHOD = 'notifications/claude/channel';
export { CHANNEL_CAPABILITY } from './channel-instructions.js';

export interface ChannelNotification {
  readonly method: typeof CHANNEL_NOTIFICATION_METHOD;
  readonly params: {
    /** What the model reads inside the `<channel>` tag. */
    readonly content: string;
    /** `as`, `channel`, `sender`, `seq`, `count` (and `direct: "true"` for direct messages): strings, keys matching [A-Za-z_][A-Za-z0-9_]*. */
    readonly meta: Readonly<Record<string, string>>;
  };
}

const PREVIEW_CHARACTERS = 200;

/** The event for `name`'s subscription `sub`, which has unread messages (`sub.newest` set). */
export function channelNotification(name: string, sub: UnreadSubscription): ChannelNotification | undefined {
  const newest = sub.newest;
  if (newest === undefined || sub.unread === 0) return undefined;
  const count = sub.unreadCapped ? `${sub.unread}+` : String(sub.unread);
  const what =
    sub.unread === 1 && !sub.unreadCapped
      ? `New agentbus message for ${name} on "${sub.channel}" from ${newest.sender}`
      : `${count} unread agentbus messages for ${name} on "${sub.channel}", newest from ${newest.sender}`;
  const content = `${what}: ${JSON.stringify(previewText(newest.content, PREVIEW_CHARACTERS))}. Call receive with as: "${name}" to read, then pass its batch_token as ack.`;
  return {
    method: CHANNEL_NOTIFICATION_METHOD,
    params: { content, meta: { as: name, channel: sub.channel, sender: newest.sender, seq: String(newest.seq), count } },
  };
}

/**
 * The event for `name`'s direct messages (`entry` is the '@direct' inbox
 * entry, `entry.newest` set): sent at once, never held behind the push
 * interval, saying who wrote and that it was written to `name` alone.
 */
export function directNotification(name: string, entry: UnreadSubscription): ChannelNotification | undefined {
  const newest = entry.newest;
  if (newest === undefined || entry.unread === 0) return undefined;
  const count = entry.unreadCapped ? `${entry.unread}+` : String(entry.unread);
  const what =
    entry.unread === 1 && !entry.unreadCapped
      ? `Direct agentbus message to ${name} from ${newest.sender}`
      : `${count} unread direct agentbus messages to ${name}, newest from ${newest.sender}`;
  const content = `${what}: ${JSON.stringify(previewText(newest.content, PREVIEW_CHARACTERS))}. Call receive with as: "${name}" to read, then pass its batch_token as ack; answer with send to: ["${newest.sender}"] and reply_to: ${newest.seq}.`;
  return {
    method: CHANNEL_NOTIFICATION_METHOD,
    params: { content, meta: { as: name, channel: entry.channel, direct: 'true', sender: newest.sender, seq: String(newest.seq), count } },
  };
}
