/**
 * The push half of the inbox monitor: which Claude Code channel events a
 * look's findings call for.
 *
 * Rules: the messages a name had unread when this process first saw it (or
 * the subscription) are not pushed (register reports them); nothing for a
 * name while it is inside a receive (it gets the messages directly); nothing
 * once the name is released or lost. Channel traffic is coalesced: at most
 * one event per subscription per push interval, carrying the unread count.
 * A direct message is announced at once, whatever channel events went out
 * just before: it was written to this name alone, and a wait of seconds
 * behind a busy channel is what it must not cost.
 */
import { isDirectEntry } from '../bus/direct-inbox-entry.js';
import { channelNotification, directNotification, type ChannelNotification } from './channel-push.js';
import type { NameState } from './inbox-names.js';

export interface ChannelPusherOptions {
  /** The monotonic clock, ms (a wall-clock jump must neither stall nor bunch pushes). */
  readonly now: () => number;
  /** Sends an event to the client. */
  readonly push: (notification: ChannelNotification) => void;
  /** Channel events for one subscription are at least this far apart. */
  readonly pushIntervalMs: number;
  /** True while `name` is inside a receive of this process. */
  readonly receiving: (name: string) => boolean;
}

export interface ChannelPusher {
  /** Sends the events `names` call for; returns when the next coalesced one falls due (monotonic ms), or Infinity. */
  pushFrom(names: readonly NameState[]): number;
}

interface PushMark {
  /** Messages up to this seq were pushed, or were unread before this process saw the subscription. */
  through: number;
  /** When the last event for this subscription was sent, monotonic ms. */
  lastAt: number;
}

const markKey = (name: string, channel: string): string => `${name}\u0000${channel}`;

export function createChannelPusher(options: ChannelPusherOptions): ChannelPusher {
  const marks = new Map<string, PushMark>();
  /** Per name: direct messages up to this seq were pushed or predate this process's first sight of the name. */
  const directMarks = new Map<string, number>();

  const pushDirect = ({ name, subscriptions }: NameState): void => {
    const entry = subscriptions.find(isDirectEntry);
    const newestSeq = entry?.newest?.seq ?? 0;
    const through = directMarks.get(name);
    if (through === undefined) {
      directMarks.set(name, newestSeq);
      return;
    }
    if (entry === undefined || newestSeq <= through || options.receiving(name)) return;
    const notification = directNotification(name, entry);
    if (notification === undefined) return;
    options.push(notification);
    directMarks.set(name, newestSeq);
  };

  return {
    pushFrom(names) {
      const now = options.now();
      const seen = new Set<string>();
      let nextDue = Infinity;
      for (const state of names) {
        pushDirect(state);
        for (const sub of state.subscriptions) {
          if (isDirectEntry(sub)) continue;
          const key = markKey(state.name, sub.channel);
          seen.add(key);
          const newestSeq = sub.newest?.seq ?? 0;
          const mark = marks.get(key);
          if (mark === undefined) {
            marks.set(key, { through: newestSeq, lastAt: -Infinity });
            continue;
          }
          if (options.receiving(state.name) || sub.newest === undefined || newestSeq <= mark.through) continue;
          const due = mark.lastAt + options.pushIntervalMs;
          if (now < due) {
            nextDue = Math.min(nextDue, due);
            continue;
          }
          const notification = channelNotification(state.name, sub);
          if (notification === undefined) continue;
          options.push(notification);
          mark.through = newestSeq;
          mark.lastAt = now;
        }
      }
      // A released or lost name, or a dropped subscription, starts afresh if it comes back.
      for (const key of marks.keys()) if (!seen.has(key)) marks.delete(key);
      const held = new Set(names.map((n) => n.name));
      for (const name of directMarks.keys()) if (!held.has(name)) directMarks.delete(name);
      return nextDue;
    },
  };
}
