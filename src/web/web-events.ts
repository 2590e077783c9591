/**
 * The web console's event stream (server-sent events), one reader loop for
 * every open page, woken by the same change watcher `receive` and `tail`
 * sleep on:
 *   waiting     there is no database yet (no agent has started); sent until it appears
 *   hello       the bus is open: the page loads its rows and follows from here
 *   messages    rows committed since the last look, tombstoned ones left out
 *               (what a reload, which reads tombstone = 0, would not show)
 *   tombstoned  seqs of rows tombstoned since the last look (a memory's
 *               superseded or deleted revision): the page removes them
 *   read_states [{seq, read}] for direct messages whose read state (unread,
 *               delivered, acknowledged per addressee) changed: an ack commits no
 *               message, so it is found at the look (at least once a second)
 *   state       sessions, channels, conversations, capacity, notices, reservations, when changed
 * Direct messages in `messages` carry `read` (web-direct.ts).
 */
import type { ServerResponse } from 'node:http';
import type { ChangeWaiter } from '../bus/change-waiter.js';
import { MESSAGE_COLUMNS, toMessage, type Message, type MessageRow } from '../bus/message-row.js';
import type { Database } from '../db/contract/database.js';
import { NO_AGENT_YET, type BusHolder, type WebBus } from './web-bus.js';
import { readStateWatch, withReadStates, type ReadStateWatch } from './web-direct.js';

// One look reads at most this many new rows; a larger burst is read in several looks.
const LIVE_BATCH = 500;
// The state (counts over every channel) is read again at most this often.
const STATE_EVERY_MS = 1000;
// While there is no database, it is looked for this often (a stat and a header read).
const DATABASE_LOOK_MS = 100;
// A comment line this often keeps proxies and the browser from timing the stream out.
const KEEPALIVE_MS = 15_000;

export interface EventHub {
  /** Adds an open response as a client; it is dropped when it closes. */
  add(res: ServerResponse): void;
  /** Ends every stream and stops the loop; resolves once the loop has returned. */
  close(): Promise<void>;
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Where the loop is in the tables: the last seq sent, and the newest tombstone time with the seqs tombstoned at it (ties at one millisecond are told once). */
interface Cursor {
  last: number;
  tombstoneAt: number;
  atMark: Set<number>;
}

function readCursor(bus: WebBus): Cursor {
  const { db } = bus;
  const mark = db.read(() => db.all<{ seq: number; at: number }>(
    'SELECT seq, tombstone_at AS at FROM messages WHERE tombstone_at = (SELECT max(tombstone_at) FROM messages)',
  ));
  return { last: bus.lastSeq(), tombstoneAt: mark[0]?.at ?? 0, atMark: new Set(mark.map((r) => r.seq)) };
}

/** New rows after the cursor, at most LIVE_BATCH, tombstoned ones left out; moves the cursor over every row read. */
function readAfter(db: Database, cursor: Cursor): { rows: Message[]; more: boolean } {
  const rows = db.read(() =>
    db.all<MessageRow & { tombstone: number }>(`SELECT ${MESSAGE_COLUMNS}, m.tombstone FROM messages m WHERE m.seq > ? ORDER BY m.seq ${db.capabilities.dialect.limit}`, [cursor.last, LIVE_BATCH]),
  );
  if (rows.length > 0) cursor.last = (rows.at(-1) as MessageRow).seq;
  return { rows: rows.filter((r) => r.tombstone === 0).map(toMessage), more: rows.length === LIVE_BATCH };
}

/** Seqs tombstoned since the cursor (the index on tombstone_at makes this a range read). */
function readTombstoned(db: Database, cursor: Cursor): number[] {
  const rows = db.read(() =>
    db.all<{ seq: number; at: number }>('SELECT seq, tombstone_at AS at FROM messages WHERE tombstone_at >= ? ORDER BY tombstone_at', [cursor.tombstoneAt]),
  );
  const fresh = rows.filter((r) => r.at > cursor.tombstoneAt || !cursor.atMark.has(r.seq));
  if (fresh.length === 0) return [];
  const newest = (rows.at(-1) as { at: number }).at;
  if (newest > cursor.tombstoneAt) cursor.atMark.clear();
  cursor.tombstoneAt = newest;
  for (const r of rows) if (r.at === newest) cursor.atMark.add(r.seq);
  return fresh.map((r) => r.seq);
}

/**
 * Rows, tombstones and changed read states since the cursor, in one snapshot
 * (an edit's new revision and its predecessor's tombstone are told in the
 * same look), as frames; `reads` follows the direct messages not yet
 * acknowledged by all their addressees.
 */
function readChanges(bus: WebBus, at: Cursor, reads: ReadStateWatch): { frames: string[]; changed: boolean } {
  const frames: string[] = [];
  let changed = false;
  const { tombstoned, receipts } = bus.db.read(() => {
    for (let more = true; more; ) {
      const batch = readAfter(bus.db, at);
      more = batch.more;
      const rows = withReadStates(bus.db, batch.rows);
      reads.add(rows);
      if (rows.length > 0) frames.push(frame('messages', rows));
      changed ||= rows.length > 0;
    }
    return { tombstoned: readTombstoned(bus.db, at), receipts: reads.changes(bus.db) };
  });
  if (tombstoned.length > 0) frames.push(frame('tombstoned', tombstoned));
  if (receipts.length > 0) frames.push(frame('read_states', receipts));
  return { frames, changed: changed || tombstoned.length > 0 || receipts.length > 0 };
}

/** The loop and its clients: where it is in the tables (undefined before the database opens), the last state sent, the waiting text. */
class Hub implements EventHub {
  private readonly clients = new Set<ServerResponse>();
  private readonly stop = new AbortController();
  private cursor: Cursor | undefined;
  /** The direct messages whose read states the pages follow, from the first look with a page open. */
  private watch: ReadStateWatch | undefined;
  private waitingText = NO_AGENT_YET;
  private stateText = '';
  private stateAt = 0;
  private readonly loop: Promise<void>;
  private readonly keepalive: NodeJS.Timeout;

  constructor(
    private readonly holder: BusHolder,
    private readonly waiter: ChangeWaiter,
  ) {
    const opened = holder.current();
    this.cursor = opened === undefined ? undefined : readCursor(opened);
    this.loop = this.run();
    this.keepalive = setInterval(() => this.broadcast(': keepalive\n\n'), KEEPALIVE_MS);
  }

  add(res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    this.greet(res);
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }

  async close(): Promise<void> {
    clearInterval(this.keepalive);
    this.stop.abort();
    await this.loop;
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private async run(): Promise<void> {
    const { signal } = this.stop;
    while (!signal.aborted) {
      const bus = this.holder.current();
      await this.waiter.waitForChange(bus === undefined ? DATABASE_LOOK_MS : STATE_EVERY_MS, signal);
      if (signal.aborted) break;
      if (bus === undefined || this.cursor === undefined) {
        await this.openBus();
        continue;
      }
      try {
        this.look(bus, this.cursor);
      } catch (error) {
        this.broadcast(frame('problem', { message: (error as Error).message }));
      }
    }
  }

  private broadcast(text: string): void {
    for (const res of this.clients) res.write(text);
  }

  private refreshState(bus: WebBus, force: boolean): void {
    const now = Date.now();
    if (!force && now - this.stateAt < STATE_EVERY_MS) return;
    this.stateAt = now;
    const text = JSON.stringify(bus.readState());
    if (text === this.stateText) return;
    this.stateText = text;
    this.broadcast(`event: state\ndata: ${text}\n\n`);
  }

  private greet(res: ServerResponse): void {
    if (this.cursor === undefined) return void res.write(frame('waiting', { message: this.waitingText }));
    res.write(frame('hello', { last_seq: this.cursor.last }));
    if (this.stateText !== '') res.write(`event: state\ndata: ${this.stateText}\n\n`);
  }

  /** Waits for the database; true once the bus is open and the cursor set. */
  private async openBus(): Promise<boolean> {
    try {
      const bus = await this.holder.look();
      if (bus === undefined) return false;
      this.cursor = readCursor(bus);
      for (const res of this.clients) this.greet(res);
      return true;
    } catch (error) {
      // A file that is not (yet) a database this build can read: said on the page, looked at again.
      this.waitingText = `${NO_AGENT_YET} (${(error as Error).message})`;
      this.broadcast(frame('waiting', { message: this.waitingText }));
      return false;
    }
  }

  private look(bus: WebBus, at: Cursor): void {
    if (this.clients.size === 0) {
      // Nobody to tell: a page that opens later loads the recent rows itself and follows from here.
      Object.assign(at, readCursor(bus));
      return;
    }
    const { frames, changed } = readChanges(bus, at, (this.watch ??= readStateWatch(bus.db)));
    if (frames.length > 0) this.broadcast(frames.join(''));
    this.refreshState(bus, changed);
  }
}

/** Starts the loop that feeds `add`ed clients from the bus `holder` opens (waiting for its database first). */
export function startEventHub(holder: BusHolder, waiter: ChangeWaiter): EventHub {
  return new Hub(holder, waiter);
}
