/**
 * Each addressee's state for each direct message (`direct_recipients`,
 * sql/0012): unread, then delivered in a batch (with that batch's token),
 * then acknowledged. Unlike a channel cursor the state is per message, so a
 * receive can take some of an addressee's messages (the replies an
 * ask-and-wait is for) and leave the others as they were.
 */
import type { Database } from '../db/contract/database.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import { MESSAGE_COLUMNS, type MessageRow } from './message-row.js';

export const DIRECT_STATES = ['unread', 'delivered', 'acknowledged'] as const;
export type DirectState = (typeof DIRECT_STATES)[number];

/** A direct message row as receive selects it, with the addressee's batch token while delivered. */
export interface DirectRow extends MessageRow {
  /** The token of the batch it was last delivered in, or null while unread. */
  direct_token: string | null;
}

/** Which of an addressee's open direct messages to look at. */
export interface DirectSelection {
  /** 'unread' (never delivered, or put back), 'delivered' (in an unacknowledged batch) or 'open' (either). */
  readonly state: 'unread' | 'delivered' | 'open';
  /** Only replies to this seq. */
  readonly replyTo?: number;
}

/**
 * Without statistics SQLite would rather walk an addressee's whole primary-key
 * range (every message it ever acknowledged, up to retention) than this index
 * of its unread and delivered ones, so the looks a waiting receive makes every
 * poll name it.
 */
const byState = (db: Database): string => db.capabilities.dialect.indexedBy('direct_recipients_state');

/** Not yet acknowledged, over `direct_recipients d`: two ranges of the index direct_recipients_state. */
export const OPEN = "d.state IN ('unread', 'delivered')";

// The states are this module's literals, never input, so they are written into the SQL, where the planner can see them.
function where(selection: DirectSelection): { sql: string; params: number[] } {
  const state = selection.state === 'open' ? OPEN : `d.state = '${selection.state}'`;
  if (selection.replyTo === undefined) return { sql: state, params: [] };
  return { sql: `${state} AND m.reply_to = ?`, params: [selection.replyTo] };
}

/** Records the addressees of the direct message `seq`, all unread. */
export function storeRecipients(db: Database, seq: number, to: readonly string[]): void {
  to.forEach((addressee, position) => {
    db.run('INSERT INTO direct_recipients (seq, addressee, position) VALUES (?, ?, ?)', [seq, addressee, position]);
  });
}

/** Up to `limit` of `addressee`'s direct messages matching `selection`, by seq. */
export function selectDirect(db: Database, addressee: string, selection: DirectSelection, limit: number): DirectRow[] {
  const filter = where(selection);
  return db.all<DirectRow>(
    `SELECT ${MESSAGE_COLUMNS}, d.pending_token AS direct_token
       FROM direct_recipients d ${byState(db)} JOIN messages m ON m.seq = d.seq
      WHERE d.addressee = ? AND ${filter.sql} ORDER BY d.seq ${db.capabilities.dialect.limit}`,
    [addressee, ...filter.params, limit],
  );
}

/** Whether `addressee` has a direct message matching `selection`: the cheap look of a waiting receive. */
export function hasDirect(db: Database, addressee: string, selection: DirectSelection): boolean {
  const filter = where(selection);
  return (
    db.get(`SELECT 1 AS one FROM direct_recipients d ${byState(db)} JOIN messages m ON m.seq = d.seq WHERE d.addressee = ? AND ${filter.sql} LIMIT 1`, [
      addressee,
      ...filter.params,
    ]) !== undefined
  );
}

/** How many direct messages to `addressee` are not yet acknowledged. */
export function openDirectCount(db: Database, addressee: string): number {
  return db.get<{ n: number }>(`SELECT count(*) AS n FROM direct_recipients d ${byState(db)} WHERE d.addressee = ? AND ${OPEN}`, [addressee])?.n ?? 0;
}

/** Marks `seqs` delivered to `addressee` in the batch `token` at `now`. */
export function markDelivered(db: Database, addressee: string, seqs: readonly number[], token: string, now: number): void {
  if (seqs.length === 0) return;
  db.run(
    `UPDATE direct_recipients SET state = 'delivered', pending_token = ?, delivered_at = ?
      WHERE addressee = ? AND state <> 'acknowledged' AND seq IN (${db.capabilities.dialect.jsonIntegers})`,
    [token, now, addressee, JSON.stringify(seqs)],
  );
}

/** Puts `addressee`'s delivered messages other than `kept` back to unread: a batch cut short delivers them again later. */
export function returnUndelivered(db: Database, addressee: string, kept: readonly number[]): void {
  db.run(
    `UPDATE direct_recipients ${byState(db)} SET state = 'unread', pending_token = NULL, delivered_at = NULL
      WHERE addressee = ? AND state = 'delivered' AND seq NOT IN (${db.capabilities.dialect.jsonIntegers})`,
    [addressee, JSON.stringify(kept)],
  );
}

/** Acknowledges `addressee`'s messages delivered in batch `token`; returns how many. */
export function acknowledgeDirect(db: Database, addressee: string, token: string, now: number): number {
  return db.run(
    `UPDATE direct_recipients ${byState(db)} SET state = 'acknowledged', pending_token = NULL, acked_at = ?
      WHERE addressee = ? AND state = 'delivered' AND pending_token = ?`,
    [now, addressee, token],
  ).changes;
}

/** The seqs of direct messages among `messages`. */
export function directSeqs(messages: readonly { seq: number; channel: string }[]): number[] {
  return messages.filter((m) => m.channel === DIRECT_CHANNEL).map((m) => m.seq);
}

/** Messages `reader` may read: every channel message, and a direct one only when `reader` sent it or is among its addressees. */
export function directVisibleTo(reader: string): { sql: string; params: string[] } {
  return {
    sql: `(m.channel <> '${DIRECT_CHANNEL}' OR m.sender = ? OR EXISTS (SELECT 1 FROM direct_recipients v WHERE v.addressee = ? AND v.seq = m.seq))`,
    params: [reader, reader],
  };
}

/** One addressee's state of one direct message, as stored. */
export interface RecipientState {
  /** The addressee's display name. */
  addressee: string;
  /** Where it is. */
  state: DirectState;
  /** The latest delivery, ms, or null while unread. */
  delivered_at: number | null;
  /** The acknowledgement, ms, or null before it. */
  acked_at: number | null;
}

/** Every addressee's state of direct message `seq`, in `to` order (empty when `seq` is no direct message). */
export function recipientStates(db: Database, seq: number): RecipientState[] {
  return db.all<RecipientState>('SELECT addressee, state, delivered_at, acked_at FROM direct_recipients WHERE seq = ? ORDER BY position', [seq]);
}
