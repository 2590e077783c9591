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
 * Hints within HINT_LOOK_GAP_MS of the last look are answered by one look
 * when that gap is over: on a busy bus every commit hints every server (the
 * sender's own commit its own server too, right after the look of its tool
 * call), and a look per commit per server was a third of a reader's work
 * beside a live sender (docs/performance.md, "Fourth round" of issue 24).
 * After a tool call it is rewritten at once: a hook runs right after the call
 * and must not report what the call delivered. Other changes are written at
 * most once per INBOX_WRITE_INTERVAL_MS, the newest content last, and wait
 * while a receive of this process is in flight (its answer rewrites the file
 * anyway): on a busy bus every commit changes the file, and a whole-file
 * write and rename per commit and per server was most of a receiving
 * server's time (docs/performance.md, "Soak"). A hook sees a new message
 * that much later, never a delivered one as unread.
 *
 * The parts: inbox-names.ts (one look), inbox-writer.ts (the file),
 * channel-pusher.ts (the events and their rules: channel traffic coalesced
 * per PUSH_INTERVAL_MS, a direct message at once). This file wires them to
 * the change feed, the poll and the receives in flight. Own messages are
 * never unread.
 */
import type { BusContext } from '../bus/bus-context.js';
import type { ChangeFeed } from '../bus/change-waiter.js';
import { formatProcessIdentity, type ProcessIdentity } from '../db/processes/process-identity.js';
import { removeOldHookStates } from '../harness/hook-state.js';
import { inboxFileName, removeDeadInboxFiles } from '../harness/inbox-file.js';
import type { ChannelNotification } from './channel-push.js';
import { createChannelPusher, type ChannelPusher } from './channel-pusher.js';
import { readNames, type NameState } from './inbox-names.js';
import { createInboxWriter, type InboxWriter } from './inbox-writer.js';

/** The floor: how long a change nobody announced can go unnoticed. */
export const INBOX_POLL_MS = 1000;
/** Changes no tool call asked for reach the inbox file at most this often. */
export const INBOX_WRITE_INTERVAL_MS = 250;
/** At most one channel event per subscription in this interval (direct messages are not held by it). */
export const PUSH_INTERVAL_MS = 2000;
/**
 * Hint-driven looks start at least this far apart (the first after a quiet
 * spell at once): a channel event or file write waits at most this much
 * longer, far inside their aims, and every hint is still answered by a look
 * that starts after it.
 */
export const HINT_LOOK_GAP_MS = 5;
/** A failing look is logged at most this often. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface InboxMonitorOptions {
  readonly ctx: BusContext;
  /** The data directory (the inbox folder lives in it). */
  readonly dataDir: string;
  /** Commit hints of this process; the monitor also listens to the bells of the names this process holds (a direct message rings only its addressees'). */
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
  /** What the monitor has done so far: looks (database reads) and inbox-file writes (the benchmark's cost figures). */
  counts(): { readonly looks: number; readonly writes: number };
}

/** Counts of the receives in flight per name: no pushes for a name inside one, no timed writes while any runs. */
function receiveCounter(): { enter(name: string): () => void; has(name: string): boolean; any(): boolean } {
  const receiving = new Map<string, number>();
  return {
    enter(name) {
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
    has: (name) => receiving.has(name),
    any: () => receiving.size > 0,
  };
}

/**
 * Listens to the bells of exactly the names held (the last look's), so a
 * direct message to one of them is looked at and pushed at once, not at the
 * poll, while the bells of names this process does not hold are not heard.
 */
function nameBellListener(feed: Pick<ChangeFeed, 'onChange'>, onHint: () => void): { hold(names: readonly string[]): void; close(): void } {
  const listening = new Map<string, () => void>();
  return {
    hold(names) {
      const held = new Set(names);
      for (const [name, stop] of listening) {
        if (held.has(name)) continue;
        stop();
        listening.delete(name);
      }
      // A function of its own per name: removing it must not remove the common bell's listener.
      for (const name of held) if (!listening.has(name)) listening.set(name, feed.onChange(() => onHint(), { name }));
    },
    close() {
      for (const stop of listening.values()) stop();
      listening.clear();
    },
  };
}

/** Logs at most once per FAILURE_LOG_INTERVAL_MS. */
function failureLogger(ctx: BusContext): (message: string, error: unknown) => void {
  let last = -Infinity;
  return (message, error) => {
    const now = ctx.clock.monotonic();
    if (now - last < FAILURE_LOG_INTERVAL_MS) return;
    last = now;
    ctx.log.warn(message, { error: (error as Error).message });
  };
}

/** Removes what dead servers and old hook runs left in the inbox folder. */
function cleanInboxFolder(ctx: BusContext, dataDir: string): void {
  try {
    removeDeadInboxFiles(dataDir, Date.now());
    removeOldHookStates(dataDir, Date.now());
  } catch (error) {
    ctx.log.warn('cleaning the inbox folder failed', { error: (error as Error).message });
  }
}

/** The inbox file's writer, when a harness reads one (undefined without a harness). */
function inboxWriterFor(options: InboxMonitorOptions, receiving: ReturnType<typeof receiveCounter>, logFailure: (message: string, error: unknown) => void): InboxWriter | undefined {
  const { ctx, dataDir } = options;
  if (options.harness === undefined) return undefined;
  return createInboxWriter({
    clock: ctx.clock,
    dataDir,
    fileName: inboxFileName(options.harness, options.server),
    server: formatProcessIdentity(options.server),
    harness: formatProcessIdentity(options.harness),
    writeIntervalMs: options.writeIntervalMs ?? INBOX_WRITE_INTERVAL_MS,
    receiving: receiving.any,
    onFailure: logFailure,
  });
}

/**
 * Long because it is one closure over the monitor's state (closed, the look
 * scheduled for this turn, the due timer, the look count), which looking,
 * hinting and closing all read and write; the parts that need none of it
 * (the writer, the pusher, the name bells, the failure log) are their own.
 */
export function createInboxMonitor(options: InboxMonitorOptions): InboxMonitor {
  const { ctx, dataDir, push } = options;
  const receiving = receiveCounter();
  const logFailure = failureLogger(ctx);
  const writer = inboxWriterFor(options, receiving, logFailure);
  const pusher: ChannelPusher | undefined =
    push === undefined
      ? undefined
      : createChannelPusher({ now: () => ctx.clock.monotonic(), push, pushIntervalMs: options.pushIntervalMs ?? PUSH_INTERVAL_MS, receiving: receiving.has });
  let closed = false;
  let scheduled = false;
  let dueTimer: NodeJS.Timeout | undefined;
  let hintTimer: NodeJS.Timeout | undefined;
  let lastLookAt = -Infinity;
  let looks = 0;

  /** Looks again when a coalesced push falls due (monotonic ms). */
  const lookAt = (at: number): void => {
    if (at === Infinity || dueTimer !== undefined || closed) return;
    dueTimer = setTimeout(() => {
      dueTimer = undefined;
      look(false);
    }, Math.max(0, at - ctx.clock.monotonic()));
    dueTimer.unref();
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
      looks++;
      lastLookAt = ctx.clock.monotonic();
      names = readNames(ctx);
    } catch (error) {
      // Busy, reset or damaged: the next look tries again; the old file stays (a hint, never a receipt).
      logFailure('inbox look failed', error);
      return;
    }
    nameBells.hold(names.map((n) => n.name));
    if (urgent) writer?.writeNow(names);
    else writer?.writeSoon(names);
    if (pusher !== undefined) lookAt(pusher.pushFrom(names));
  };

  // Hints can arrive in bursts (several rings, from several processes): one look per turn of the
  // event loop, and none sooner than HINT_LOOK_GAP_MS after the last look; the look that answers
  // starts after every hint it answers.
  const onHint = (): void => {
    if (scheduled || closed) return;
    scheduled = true;
    const answer = (): void => {
      scheduled = false;
      hintTimer = undefined;
      look(false);
    };
    const wait = lastLookAt + HINT_LOOK_GAP_MS - ctx.clock.monotonic();
    if (wait <= 0) {
      setImmediate(answer);
      return;
    }
    hintTimer = setTimeout(answer, wait);
    hintTimer.unref();
  };
  const stopListening = options.feed.onChange(onHint);
  const nameBells = nameBellListener(options.feed, onHint);
  const poll = setInterval(() => look(false), options.pollMs ?? INBOX_POLL_MS);
  poll.unref();
  cleanInboxFolder(ctx, dataDir);

  const close = (): void => {
    if (closed) return;
    closed = true;
    stopListening();
    nameBells.close();
    clearInterval(poll);
    if (dueTimer !== undefined) clearTimeout(dueTimer);
    if (hintTimer !== undefined) clearTimeout(hintTimer);
    writer?.close();
  };

  return {
    refresh: () => look(true),
    enterReceive: receiving.enter,
    close,
    counts: () => ({ looks, writes: writer?.writes ?? 0 }),
  };
}
