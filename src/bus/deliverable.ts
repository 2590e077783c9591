/**
 * The one rule for which messages of a subscribed channel a receive delivers
 * after a cursor: on that channel, above the cursor, not tombstoned, and not
 * the reader's own unless asked for. receive, the inbox summary (unread.ts)
 * and register's pending counts all select with it, so they never disagree.
 */

export interface Fragment {
  /** A boolean SQL expression over a `messages` table aliased `m`. */
  readonly sql: string;
  /** Its parameters, in order. */
  readonly params: readonly (string | number)[];
}

/**
 * Messages of `channel` with `after < seq <= upTo` that `reader` would be
 * delivered (own ones only with `includeOwn`). `upTo` defaults to no bound.
 */
export function deliverableAfter(channel: string, after: number, reader: string, options: { includeOwn?: boolean; upTo?: number } = {}): Fragment {
  return {
    sql: 'm.channel = ? AND m.seq > ? AND m.seq <= ? AND m.tombstone = 0 AND (? OR m.sender != ?)',
    params: [channel, after, options.upTo ?? Number.MAX_SAFE_INTEGER, options.includeOwn === true ? 1 : 0, reader],
  };
}
