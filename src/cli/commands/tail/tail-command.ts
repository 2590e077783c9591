/**
 * `agentbus tail`: the recent messages, then the live ones as they commit,
 * like `tail -f`. A pure reader: it never registers, never moves a cursor and
 * never takes the writer lock; it wakes on the same change watcher a long-poll
 * receive sleeps on, and looks again at least every poll interval.
 */
import { createChangeWaiter, POLL_INTERVAL_MS } from '../../../bus/change-waiter.js';
import { DIRECT_CHANNEL } from '../../../bus/direct-addressees.js';
import { MESSAGE_COLUMNS, toMessage, type Message, type MessageRow } from '../../../bus/message-row.js';
import { isChannelName } from '../../../bus/names.js';
import type { Database } from '../../../db/contract/database.js';
import { closestName } from '../../../did-you-mean.js';
import { openBusDatabase } from '../../bus-database.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { messageLines, paletteFor, threaded, type Palette } from '../../message-line.js';
import { parseSince } from '../../since-flag.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus tail` takes (its spec.ts). */
export type TailOptions = OptionsOf<typeof spec.options>;

/** Recent messages shown before following, when neither --lines nor --since is given. */
export const TAIL_DEFAULT_LINES = 20;
const TAIL_MAX_LINES = 100_000;
// One look reads at most this many new rows; a burst larger than that is read in several looks.
const LIVE_BATCH = 500;

export interface TailFilters {
  /** Channels to show; empty: all. */
  readonly channels: readonly string[];
  /** Senders to show; empty: all. */
  readonly senders: readonly string[];
  /** Only messages created at or after this time (ms). */
  readonly sinceMs?: number;
  /** Only direct messages (--direct). */
  readonly direct?: boolean;
  /** Only direct messages to one of these display names (--to); empty: no such filter. */
  readonly to?: readonly string[];
}

function positiveInt(flag: string, text: string, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new CliError('usage', `--${flag} must be a whole number from 1 to ${max}; got "${text}"`);
  }
  return Number(text);
}

/** The SQL condition and its parameters for the filters (messages aliased `m`). */
export function filterClause(filters: TailFilters): { sql: string; params: (string | number)[] } {
  const parts = ['m.tombstone = 0'];
  const params: (string | number)[] = [];
  if (filters.channels.length > 0) {
    parts.push(`m.channel IN (${filters.channels.map(() => '?').join(', ')})`);
    params.push(...filters.channels);
  }
  if (filters.senders.length > 0) {
    parts.push(`m.sender IN (${filters.senders.map(() => '?').join(', ')})`);
    params.push(...filters.senders);
  }
  if (filters.sinceMs !== undefined) {
    parts.push('m.created_at >= ?');
    params.push(filters.sinceMs);
  }
  if (filters.direct === true) {
    parts.push('m.channel = ?');
    params.push(DIRECT_CHANNEL);
  }
  if (filters.to !== undefined && filters.to.length > 0) {
    parts.push(`EXISTS (SELECT 1 FROM direct_recipients d WHERE d.seq = m.seq AND d.addressee IN (${filters.to.map(() => '?').join(', ')}))`);
    params.push(...filters.to);
  }
  return { sql: parts.join(' AND '), params };
}

/** Every channel named must exist: a typo would otherwise show nothing, forever. */
function checkChannels(db: Database, channels: readonly string[]): void {
  const bad = channels.find((c) => !isChannelName(c));
  if (bad !== undefined) throw new CliError('usage', `"${bad}" is not a channel name (letters, digits, ".", "_", "-")`);
  if (channels.length === 0) return;
  const known = db.read(() => db.all<{ name: string }>('SELECT name FROM channels WHERE name <> ? ORDER BY name', [DIRECT_CHANNEL]).map((r) => r.name));
  for (const channel of channels) {
    if (known.includes(channel)) continue;
    const near = closestName(channel, known);
    const hint = near !== undefined ? ` (did you mean "${near}"?)` : known.length > 0 ? `; the channels are: ${known.join(', ')}` : '; there are no channels yet';
    throw new CliError('failed', `no channel "${channel}"${hint}`);
  }
}

/** Every --to name must have been registered on this bus: a typo would otherwise show nothing, forever. */
function checkAddressees(db: Database, names: readonly string[]): void {
  if (names.length === 0) return;
  const known = db.read(() => db.all<{ name: string }>('SELECT name FROM known_names ORDER BY name').map((r) => r.name));
  for (const name of names) {
    if (known.includes(name)) continue;
    const near = closestName(name, known);
    throw new CliError('failed', `no agent was ever called "${name}" on this bus${near === undefined ? '' : ` (did you mean "${near}"?)`}`);
  }
}

/** What tail does, from its options. */
interface TailPlan {
  readonly filters: TailFilters;
  /** How many recent messages to show first (all since --since when undefined and sinceMs is set). */
  readonly lines: number | undefined;
  readonly follow: boolean;
  readonly json: boolean;
}

function readRecent(db: Database, options: TailPlan): { messages: Message[]; last: number } {
  return db.read(() => {
    const last = db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0;
    const { sql, params } = filterClause(options.filters);
    // Every message since --since has no LIMIT at all (engines disagree on a negative one).
    const limit = options.lines ?? (options.filters.sinceMs === undefined ? TAIL_DEFAULT_LINES : undefined);
    const bounded = limit === undefined ? '' : ` ${db.capabilities.dialect.limit}`;
    const rows = db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${sql} AND m.seq <= ? ORDER BY m.seq DESC${bounded}`, [...params, last, ...(limit === undefined ? [] : [limit])]);
    return { messages: rows.reverse().map(toMessage), last };
  });
}

function readAfter(db: Database, filters: TailFilters, after: number): { messages: Message[]; last: number } {
  return db.read(() => {
    // The cursor moves over every new row, shown or not, so a filtered look never rereads them.
    const rows = db.all<{ seq: number }>(`SELECT seq FROM messages WHERE seq > ? ORDER BY seq ${db.capabilities.dialect.limit}`, [after, LIVE_BATCH]);
    if (rows.length === 0) return { messages: [], last: after };
    const last = (rows.at(-1) as { seq: number }).seq;
    const { sql, params } = filterClause(filters);
    const shown = db.all<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE ${sql} AND m.seq > ? AND m.seq <= ? ORDER BY m.seq`, [...params, after, last]);
    return { messages: shown.map(toMessage), last };
  });
}

function write(io: CliIo, messages: readonly Message[], options: TailPlan, palette: Palette, threads: boolean): void {
  if (messages.length === 0) return;
  let out = '';
  if (options.json) for (const m of messages) out += `${JSON.stringify(m)}\n`;
  else {
    const ordered = threads ? threaded(messages) : messages.map((message) => ({ message, depth: message.reply_to === null ? 0 : 1 }));
    for (const { message, depth } of ordered) out += `${messageLines(message, palette, depth).join('\n')}\n`;
  }
  io.stdout.write(out);
}

/** Runs `agentbus tail`; returns when `signal` aborts (Ctrl-C, stdout closed) or, with --once, after the recent messages. */
export async function tailCommand(io: CliIo, args: readonly string[], flags: TailOptions, signal: AbortSignal): Promise<number> {
  const config = commandConfig(io, flags);
  const channels = [...new Set([...args, ...flags.channel])];
  const senders = [...new Set(flags.sender)];
  const since = flags.since === undefined ? undefined : parseSince(flags.since, io.clock.now());
  const to = [...new Set(flags.to)];
  const direct = flags.direct || to.length > 0;
  if (direct && channels.length > 0) {
    throw new CliError('usage', `--direct and --to show direct messages, which are on no channel; drop "${channels[0]}" or the direct filter`);
  }
  const options: TailPlan = {
    filters: { channels, senders, direct, to, ...(since === undefined ? {} : { sinceMs: since }) },
    lines: flags.lines === undefined ? undefined : positiveInt('lines', flags.lines, TAIL_MAX_LINES),
    follow: !flags.once,
    json: flags.json,
  };
  const palette = paletteFor(io.isTty, io.env);
  const { db } = await openBusDatabase(config, io, { command: 'tail', writes: false });
  // A server engine's notifications wake tail as its bell files do for SQLite (commit-wake.ts).
  const wakeSource = db.wakeSource;
  const waiter = createChangeWaiter(config.data_directory, POLL_INTERVAL_MS, { everyDirect: true, ...(wakeSource === undefined ? {} : { wakeSource }) });
  try {
    checkChannels(db, channels);
    checkAddressees(db, options.filters.to ?? []);
    const recent = readRecent(db, options);
    write(io, recent.messages, options, palette, true);
    let last = recent.last;
    while (options.follow && !signal.aborted) {
      await waiter.waitForChange(60_000, signal);
      if (signal.aborted) break;
      for (;;) {
        const next = readAfter(db, options.filters, last);
        write(io, next.messages, options, palette, false);
        if (next.last === last) break;
        last = next.last;
      }
    }
    return 0;
  } finally {
    waiter.close();
    db.close();
  }
}
