/**
 * The web console's event stream (server-sent events): new messages as
 * they commit, woken by the same change watcher `receive` and `tail` sleep
 * on, and the bus state (sessions, channels, capacity, notices,
 * reservations) when it changed. One reader loop serves every open page.
 */
import type { ServerResponse } from 'node:http';
import type { ChangeWaiter } from '../bus/change-waiter.js';
import { MESSAGE_COLUMNS, toMessage, type Message, type MessageRow } from '../bus/message-row.js';
import type { Database } from '../db/database.js';

// One look reads at most this many new rows; a larger burst is read in several looks.
const LIVE_BATCH = 500;
// The state (counts over every channel) is read again at most this often.
const STATE_EVERY_MS = 1000;
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

/** Starts the loop that feeds `add`ed clients; `readState` returns the state as the page shows it. */
export function startEventHub(db: Database, waiter: ChangeWaiter, readState: () => unknown): EventHub {
  const clients = new Set<ServerResponse>();
  const stop = new AbortController();
  let last = db.read(() => db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0);
  let stateText = '';
  let stateAt = 0;

  const broadcast = (text: string): void => {
    for (const res of clients) res.write(text);
  };
  const readAfter = (): Message[] =>
    db.read(() => db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.seq > ? ORDER BY m.seq LIMIT ?`, [last, LIVE_BATCH]).map(toMessage));
  const refreshState = (force: boolean): void => {
    const now = Date.now();
    if (!force && now - stateAt < STATE_EVERY_MS) return;
    stateAt = now;
    const text = JSON.stringify(readState());
    if (text === stateText) return;
    stateText = text;
    broadcast(`event: state\ndata: ${text}\n\n`);
  };

  const loop = (async () => {
    while (!stop.signal.aborted) {
      await waiter.waitForChange(STATE_EVERY_MS, stop.signal);
      if (stop.signal.aborted) continue;
      try {
        if (clients.size === 0) {
          // Nobody to tell: a page that opens later loads the recent rows itself and follows from here.
          last = db.read(() => db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0);
          continue;
        }
        let changed = false;
        for (;;) {
          const messages = readAfter();
          if (messages.length === 0) break;
          last = (messages.at(-1) as Message).seq;
          broadcast(frame('messages', messages));
          changed = true;
        }
        refreshState(changed);
      } catch (error) {
        broadcast(frame('problem', { message: (error as Error).message }));
      }
    }
  })();
  const keepalive = setInterval(() => broadcast(': keepalive\n\n'), KEEPALIVE_MS);

  return {
    add(res) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
      res.write(frame('hello', { last_seq: last }));
      if (stateText !== '') res.write(`event: state\ndata: ${stateText}\n\n`);
      clients.add(res);
      res.on('close', () => clients.delete(res));
    },
    async close() {
      clearInterval(keepalive);
      stop.abort();
      await loop;
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}
