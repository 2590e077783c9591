/**
 * The inbox monitor of one `agentbus mcp` process: it watches what the names
 * this process holds have not read, keeps the inbox file of its harness
 * current (what `agentbus inbox` hooks read), and, with push on, sends
 * Claude Code channel events.
 *
 * It looks again on every commit hint (the change feed), after every tool
 * call (the server calls refresh before the result goes out), when a
 * coalesced push falls due, and on a one-second poll as the floor. A look is
 * one read transaction; the file is rewritten only when its content changes.
 * After a tool call it is rewritten at once: a hook runs right after the call
 * and must not report what the call delivered. Other changes are written at
 * most once per INBOX_WRITE_INTERVAL_MS, the newest content last, and wait
 * while a receive of this process is in flight (its answer rewrites the file
 * anyway): on a busy bus every commit changes the file, and a whole-file
 * write and rename per commit and per server was most of a receiving
 * server's time (docs/performance.md, "Soak"). A hook sees a new message
 * that much later, never a delivered one as unread.
 *
 * Push rules: the messages a name had unread when this process first saw
 * the subscription are not pushed (register reports them); at most one event
 * per subscription per PUSH_INTERVAL_MS, carrying the unread count; nothing
 * for a name while it is inside a receive (it gets the messages directly);
 * nothing once the name is released or lost. Own messages are never unread.
 */
import type { BusContext } from '../bus/bus-context.js';
import type { ChangeFeed } from '../bus/change-waiter.js';
import { previewText, unreadSummary, type UnreadSubscription } from '../bus/unread.js';
import { isoTime } from '../bus/time.js';
import { formatProcessIdentity, type ProcessIdentity } from '../db/process-identity.js';
import { removeOldHookStates } from '../harness/hook-state.js';
import { inboxFileName, removeDeadInboxFiles, removeInboxFile, writeInboxFile, type InboxFile } from '../harness/inbox-file.js';
import { channelNotification, type ChannelNotification } from './channel-push.js';

/** The floor: how long a change nobody announced can go unnoticed. */
export const INBOX_POLL_MS = 1000;
/** Changes no tool call asked for reach the inbox file at most this often. */
export const INBOX_WRITE_INTERVAL_MS = 250;
/** At most one channel event per subscription in this interval. */
export const PUSH_INTERVAL_MS = 2000;
/** Characters of the newest message kept in the inbox file. */
const INBOX_PREVIEW_CHARACTERS = 160;
/** A failing look is logged at most this often. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface InboxMonitorOptions {
  readonly ctx: BusContext;
  /** The data directory (the inbox folder lives in it). */
  readonly dataDir: string;
  /** Commit hints of this process. */
  readonly feed: Pick<ChangeFeed, 'onChange'>;
  /** This process. */
  readonly server: ProcessIdentity;
  /** The harness that spawned this process; without one no inbox file is written. */
  readonly harness: ProcessIdentity | undefined;
  /** Sends a channel event to the client; absent when push is off. */
  readonly push?: (notification: ChannelNotification) => void;
  /** False once the database must not be used any more (a shared file was replaced): the monitor then closes itself. */
  readonly usable?: () => boolean;
  readonly pollMs?: number;
  readonly pushIntervalMs?: number;
  readonly writeIntervalMs?: number;
}

export interface InboxMonitor {
  /** Looks now and writes the inbox file at once: call after anything that may change what is unread, before answering. Never throws. */
  refresh(): void;
  /** Marks `name` as inside a receive (no pushes) until the returned function is called. */
  enterReceive(name: string): () => void;
  /** Stops looking and removes this process's inbox file. Idempotent. */
  close(): void;
}

interface PushMark {
  /** Messages up to this seq were pushed, or were unread before this process saw the subscription. */
  through: number;
  /** When the last event for this subscription was sent, ms on the monotonic clock (a wall-clock jump must neither stall nor bunch pushes). */
  lastAt: number;
}

interface NameState {
  readonly name: string;
  readonly subscriptions: readonly UnreadSubscription[];
}

function toInboxFile(server: string, harness: string, names: readonly NameState[]): InboxFile {
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

export function createInboxMonitor(options: InboxMonitorOptions): InboxMonitor {
  const { ctx, dataDir, push } = options;
  const pollMs = options.pollMs ?? INBOX_POLL_MS;
  const pushIntervalMs = options.pushIntervalMs ?? PUSH_INTERVAL_MS;
  const writeIntervalMs = options.writeIntervalMs ?? INBOX_WRITE_INTERVAL_MS;
  const serverText = formatProcessIdentity(options.server);
  const harnessText = options.harness === undefined ? undefined : formatProcessIdentity(options.harness);
  const fileName = options.harness === undefined ? undefined : inboxFileName(options.harness, options.server);
  const receiving = new Map<string, number>();
  const marks = new Map<string, PushMark>();
  let written: string | undefined;
  /** Content a look found that is not written yet, and when the last write was (monotonic ms). */
  let pending: NameState[] | undefined;
  let lastWriteAt = -Infinity;
  let writeTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let scheduled = false;
  let dueTimer: NodeJS.Timeout | undefined;
  let lastFailureLog = -Infinity;

  const markKey = (name: string, channel: string): string => `${name}\u0000${channel}`;

  const readNames = (): NameState[] =>
    ctx.db.read(() =>
      ctx.db
        .all<{ sender: string }>('SELECT sender FROM sessions WHERE owner = ? ORDER BY sender', [ctx.owner])
        .map(({ sender }) => ({ name: sender, subscriptions: unreadSummary(ctx, sender) })),
    );

  const writeFile = (names: NameState[]): void => {
    if (fileName === undefined || harnessText === undefined) return;
    if (names.length === 0) {
      if (written !== undefined) removeInboxFile(dataDir, fileName);
      written = undefined;
      return;
    }
    const file = toInboxFile(serverText, harnessText, names);
    const text = JSON.stringify(file);
    if (text === written) return;
    writeInboxFile(dataDir, fileName, file);
    written = text;
    lastWriteAt = ctx.clock.monotonic();
  };

  const writeNow = (names: NameState[]): void => {
    pending = undefined;
    if (writeTimer !== undefined) clearTimeout(writeTimer);
    writeTimer = undefined;
    try {
      writeFile(names);
    } catch (error) {
      logFailure('writing the inbox file failed', error);
    }
  };

  /**
   * Writes `names` now if the last write is old enough and no receive is in
   * flight, else after one interval at most, superseded by anything newer.
   */
  const writeSoon = (names: NameState[]): void => {
    if (fileName === undefined) return;
    const wait = receiving.size > 0 ? writeIntervalMs : lastWriteAt + writeIntervalMs - ctx.clock.monotonic();
    if (wait <= 0) {
      writeNow(names);
      return;
    }
    pending = names;
    if (writeTimer !== undefined) return;
    writeTimer = setTimeout(() => {
      writeTimer = undefined;
      if (pending !== undefined && !closed) writeNow(pending);
    }, wait);
    writeTimer.unref();
  };

  const schedulePushAt = (at: number): void => {
    if (dueTimer !== undefined || closed) return;
    dueTimer = setTimeout(() => {
      dueTimer = undefined;
      refresh();
    }, Math.max(0, at - ctx.clock.monotonic()));
    dueTimer.unref();
  };

  const pushFrom = (names: NameState[]): void => {
    const now = ctx.clock.monotonic();
    const seen = new Set<string>();
    let nextDue = Infinity;
    for (const { name, subscriptions } of names) {
      for (const sub of subscriptions) {
        const key = markKey(name, sub.channel);
        seen.add(key);
        const newestSeq = sub.newest?.seq ?? 0;
        const mark = marks.get(key);
        if (mark === undefined) {
          marks.set(key, { through: newestSeq, lastAt: -Infinity });
          continue;
        }
        if (push === undefined || receiving.has(name) || sub.newest === undefined || newestSeq <= mark.through) continue;
        const due = mark.lastAt + pushIntervalMs;
        if (now < due) {
          nextDue = Math.min(nextDue, due);
          continue;
        }
        const notification = channelNotification(name, sub);
        if (notification === undefined) continue;
        push(notification);
        mark.through = newestSeq;
        mark.lastAt = now;
      }
    }
    // A released or lost name, or a dropped subscription, starts afresh if it comes back.
    for (const key of marks.keys()) if (!seen.has(key)) marks.delete(key);
    if (nextDue !== Infinity) schedulePushAt(nextDue);
  };

  /** Looks now; `urgent` (a tool call is about to answer) writes the file at once. */
  const look = (urgent: boolean): void => {
    if (closed) return;
    // A replaced database is neither read nor reported on: no look, no event, and no inbox file left promising messages.
    if (options.usable?.() === false) {
      close();
      return;
    }
    let names: NameState[];
    try {
      names = readNames();
    } catch (error) {
      // Busy, reset or damaged: the next look tries again; the old file stays (a hint, never a receipt).
      logFailure('inbox look failed', error);
      return;
    }
    if (urgent) writeNow(names);
    else writeSoon(names);
    pushFrom(names);
  };
  const refresh = (): void => look(false);

  const logFailure = (message: string, error: unknown): void => {
    const now = ctx.clock.monotonic();
    if (now - lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLog = now;
    ctx.log.warn(message, { error: (error as Error).message });
  };

  // Hints can arrive in bursts (several rings, from several processes): one look per turn of the event loop.
  const onHint = (): void => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      refresh();
    });
  };
  const stopListening = options.feed.onChange(onHint);
  const poll = setInterval(refresh, pollMs);
  poll.unref();
  try {
    removeDeadInboxFiles(dataDir, Date.now());
    removeOldHookStates(dataDir, Date.now());
  } catch (error) {
    ctx.log.warn('cleaning the inbox folder failed', { error: (error as Error).message });
  }

  const close = (): void => {
    if (closed) return;
    closed = true;
    stopListening();
    clearInterval(poll);
    if (dueTimer !== undefined) clearTimeout(dueTimer);
    if (writeTimer !== undefined) clearTimeout(writeTimer);
    pending = undefined;
    if (fileName !== undefined && written !== undefined) {
      try {
        removeInboxFile(dataDir, fileName);
      } catch (error) {
        ctx.log.warn('removing the inbox file failed', { error: (error as Error).message });
      }
    }
    written = undefined;
  };

  return {
    refresh: () => look(true),
    enterReceive(name) {
      receiving.set(name, (receiving.get(name) ?? 0) + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const n = (receiving.get(name) ?? 1) - 1;
        if (n <= 0) receiving.delete(name);
        else receiving.set(name, n);
      };
    },
    close,
  };
}
