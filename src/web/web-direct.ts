/**
 * Direct messages in the web console: who has been talking to whom (the
 * conversations of the side bar), each direct message's read state per
 * addressee (unread, delivered, acknowledged) as the page shows it, and the
 * watch that tells open pages when a read state changes. An acknowledgement
 * commits no message and rings no bell, so the event loop's look (at least
 * once a second) finds it here.
 */
import { DIRECT_CHANNEL } from '../bus/direct-addressees.js';
import { recipientStates } from '../bus/direct-recipients.js';
import type { Message } from '../bus/message-row.js';
import { isoTime } from '../bus/time.js';
import type { Database } from '../db/contract/database.js';

/** One addressee's read state of one direct message, as the page gets it. */
export interface ReadState {
  readonly name: string;
  readonly state: 'unread' | 'delivered' | 'acknowledged';
  /** ISO 8601 UTC, or null. */
  readonly delivered_at: string | null;
  readonly acknowledged_at: string | null;
}

/** A message as the page gets it: direct ones carry `read`, one entry per addressee in `to` order. */
export type WebMessage = Message & { read?: ReadState[] };

/** Two names that exchanged direct messages, with how many and the newest seq. */
export interface Conversation {
  /** The two display names, in sort order. */
  readonly between: readonly [string, string];
  readonly messages: number;
  readonly last_seq: number;
}

/** The read states of direct message `seq` (empty for any other). Call inside a read. */
export function readStates(db: Database, seq: number): ReadState[] {
  return recipientStates(db, seq).map((r) => ({
    name: r.addressee,
    state: r.state,
    delivered_at: r.delivered_at === null ? null : isoTime(r.delivered_at),
    acknowledged_at: r.acked_at === null ? null : isoTime(r.acked_at),
  }));
}

/** `messages` with the read states of the direct ones attached. Call inside a read. */
export function withReadStates(db: Database, messages: readonly Message[]): WebMessage[] {
  return messages.map((m) => (m.channel === DIRECT_CHANNEL ? { ...m, read: readStates(db, m.seq) } : m));
}

/**
 * Every pair of names that exchanged direct messages, newest first. One
 * pass over direct_recipients joined to the senders (read with the state, at
 * most once a second and only when something changed).
 */
export function conversations(db: Database): Conversation[] {
  const { least, greatest } = db.capabilities.dialect;
  const rows = db.all<{ a: string; b: string; n: number; last: number }>(
    `SELECT ${least}(m.sender, d.addressee) AS a, ${greatest}(m.sender, d.addressee) AS b, count(DISTINCT m.seq) AS n, max(m.seq) AS last
       FROM direct_recipients d JOIN messages m ON m.seq = d.seq
      WHERE m.tombstone = 0
      GROUP BY 1, 2 ORDER BY last DESC`,
  );
  return rows.map((r) => ({ between: [r.a, r.b], messages: r.n, last_seq: r.last }));
}

/** The SQL condition (over `messages m`) of the messages of one conversation, or of every direct message. */
export function directCondition(between: readonly [string, string] | undefined): { sql: string; params: string[] } {
  if (between === undefined) return { sql: 'm.channel = ?', params: [DIRECT_CHANNEL] };
  const [a, b] = between;
  return {
    sql: `m.channel = ? AND ((m.sender = ? AND EXISTS (SELECT 1 FROM direct_recipients d WHERE d.seq = m.seq AND d.addressee = ?))
                          OR (m.sender = ? AND EXISTS (SELECT 1 FROM direct_recipients d WHERE d.seq = m.seq AND d.addressee = ?)))`,
    params: [DIRECT_CHANNEL, a, b, b, a],
  };
}

/** Tells which direct messages' read states changed since the last look. */
export interface ReadStateWatch {
  /** Starts watching the direct messages among `messages` (just sent to the pages with these read states). */
  add(messages: readonly WebMessage[]): void;
  /** The watched messages whose read states changed, with their states now; fully acknowledged ones stop being watched. Call inside a read. */
  changes(db: Database): { seq: number; read: ReadState[] }[];
}

/**
 * Watches every direct message not yet acknowledged by all its addressees
 * (those open at start, read through the partial index of open rows, and
 * every new one), so the work per look follows the open mail, not the table.
 */
export function readStateWatch(db: Database): ReadStateWatch {
  /** seq -> its read states as last told (JSON). */
  const told = new Map<number, string>();
  db.read(() => {
    for (const { seq } of db.all<{ seq: number }>("SELECT DISTINCT seq FROM direct_recipients WHERE state <> 'acknowledged'")) {
      told.set(seq, JSON.stringify(readStates(db, seq)));
    }
  });
  return {
    add(messages) {
      for (const m of messages) if (m.read !== undefined) told.set(m.seq, JSON.stringify(m.read));
    },
    changes(db) {
      const out: { seq: number; read: ReadState[] }[] = [];
      for (const [seq, before] of told) {
        const read = readStates(db, seq);
        const text = JSON.stringify(read);
        if (read.length === 0 || read.every((r) => r.state === 'acknowledged')) told.delete(seq);
        else told.set(seq, text);
        if (text !== before) out.push({ seq, read });
      }
      return out;
    },
  };
}
