/**
 * Identity: register, heartbeat, the owner-checked `as` lookup, discover.
 *
 * A session row is held by one process (its owner token) and records that
 * process's identity and its heartbeats. Whether another process may take a
 * name is judged by src/liveness/session-liveness.ts: a holder that is certainly
 * dead frees its name at once, a live one never loses it to a wall-clock
 * jump. Every lookup and refresh is conditioned on the owner token, so a
 * process whose name was taken gets `not_registered`.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { deliverableAfter } from './deliverable.js';
import { openDirectCount } from './direct-recipients.js';
import {
  DisplayNameField,
  NameField,
  baseDisplayName,
  candidateDisplayName,
  checkDisplayName,
  checkName,
  isCandidateOf,
  DISPLAY_NAME_MAX_BYTES,
} from './names.js';
import {
  BEAT_ASSIGNMENTS,
  beatValues,
  forgetSightings,
  HOLDER_COLUMNS,
  judgeHolder,
  observer,
  type SessionHolder,
} from '../liveness/session-liveness.js';
import { isoTime } from './time.js';
import { invalid, parseInput } from './validate.js';

export { HEARTBEAT_INTERVAL_MS, SESSION_EXPIRY_MS } from '../liveness/session-liveness.js';
// Far beyond any real fleet; bounds the loop if the table were ever full of one name.
const MAX_SUFFIX = 100_000;

/** `as` on every operation but register. */
export const AsField = v.pipe(DisplayNameField, v.description('Your display_name, as register returned it.'));

/** The `context` field: a short repository hint shown to other agents. */
export const ContextField = v.pipe(
  v.string('must be a string: a repository hint such as the directory name'),
  v.minLength(1, 'must not be empty; omit it to use the working directory name'),
  v.maxLength(256, 'must be at most 256 characters'),
  v.regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'must not contain control characters'),
);

export const RegisterInput = v.strictObject({
  name: v.pipe(
    NameField,
    v.description('The name to register under, e.g. the one your hook line gives (1-128 bytes, no "/"). If another live agent holds it you get it with a suffix (Sam2): use the returned display_name.'),
  ),
  parent: v.optional(v.pipe(DisplayNameField, v.description('Your own display_name, to register a sub-agent as parent/name.'))),
  context: v.optional(
    v.pipe(ContextField, v.description('Where you work, shown to other agents: e.g. the repository name (at most 256 characters). Default: the server\'s working directory name.')),
  ),
  resume: v.optional(
    v.pipe(v.boolean('must be true or false'), v.description('Default true: keep the subscriptions and cursors this name had. false starts with none.')),
    true,
  ),
});
export type RegisterInput = v.InferInput<typeof RegisterInput>;

export const SubscriptionSummary = v.object({
  channel: v.string(),
  /** Messages after the cursor this identity would receive (own messages excluded). */
  pending: v.number(),
});

export const RegisterOutput = v.object({
  display_name: v.string(),
  resumed: v.boolean(),
  subscriptions: v.array(SubscriptionSummary),
  /** Direct messages to this name not yet acknowledged (they wait for receive); absent when none. */
  direct_pending: v.optional(v.number()),
});
export type RegisterResult = v.InferOutput<typeof RegisterOutput>;

interface SessionRow extends SessionHolder {
  /** The repository hint given at register. */
  context: string;
  /** When this owner took the name, ms. */
  registered_at: number;
}

/** The session an operation acts as. */
export interface Session {
  /** The display name, as stored on messages the session sends. */
  readonly sender: string;
  /** The context hint stored on messages the session sends. */
  readonly context: string;
}

/**
 * Registers `name` (optionally as a child of `parent`) for this process.
 * A name whose holder has stopped (see session-liveness.ts) is taken over
 * with everything that belongs to it: subscriptions, cursors, the pending
 * batch and idempotency receipts, so an agent that crashed and registers its
 * name again continues where it was. Re-registering a name this process
 * already holds returns it with a refreshed context, never a new suffix.
 * `resume: false` drops the name's subscriptions first. `resumed` is true when subscriptions were kept;
 * `subscriptions` lists the unexpired ones with their pending counts, and
 * `direct_pending` the direct messages waiting for the name.
 * `parent` must look like a display name but need not be live: a child may
 * outlive or precede its parent's session. Throws `validation`.
 */
export function register(ctx: BusContext, rawInput: unknown): RegisterResult {
  const input = parseInput(RegisterInput, rawInput);
  checkName('name', input.name);
  if (input.parent !== undefined) checkDisplayName('parent', input.parent);
  const isChild = input.parent !== undefined;
  const base = baseDisplayName(input.name, input.parent);
  // Room for the longest suffix we could hand out.
  if (Buffer.byteLength(base) + 7 > DISPLAY_NAME_MAX_BYTES) {
    throw invalid(isChild ? 'parent' : 'name', `the display name would exceed ${DISPLAY_NAME_MAX_BYTES} UTF-8 bytes; use a shorter name`);
  }
  const context = input.context ?? ctx.defaultContext;
  const { db, owner } = ctx;

  return db.transaction(() => {
    const held = db
      .all<{ sender: string }>('SELECT sender FROM sessions WHERE owner = ? ORDER BY registered_at', [owner])
      .map((r) => r.sender)
      .filter((s) => isCandidateOf(s, base, isChild));
    let displayName = held.includes(base) ? base : held[0];
    if (displayName !== undefined) {
      db.run(`UPDATE sessions SET context = ?, ${BEAT_ASSIGNMENTS} WHERE sender = ? AND owner = ?`, [context, ...beat(ctx), displayName, owner]);
    } else {
      displayName = allocate(ctx, base, isChild, context);
    }
    if (!input.resume) db.run('DELETE FROM subscriptions WHERE sender = ?', [displayName]);
    const subscriptions = subscriptionSummaries(ctx, displayName, ctx.clock.now());
    const direct = openDirectCount(ctx.db, displayName);
    ctx.log.info('registered', { sender: displayName, resumed: subscriptions.length > 0 });
    return { display_name: displayName, resumed: subscriptions.length > 0, subscriptions, ...(direct > 0 ? { direct_pending: direct } : {}) };
  });
}

function beat(ctx: BusContext): ReturnType<typeof beatValues> {
  return beatValues(ctx.clock, ctx.owner, ctx.processIdentity);
}

function allocate(ctx: BusContext, base: string, isChild: boolean, context: string): string {
  const { db, owner } = ctx;
  const by = observer(ctx.clock, owner);
  for (let n = 1; n <= MAX_SUFFIX; n++) {
    const candidate = candidateDisplayName(base, isChild, n);
    const row = db.get<SessionRow>(`SELECT ${HOLDER_COLUMNS} FROM sessions WHERE sender = ?`, [candidate]);
    const now = ctx.clock.now();
    if (row === undefined) {
      db.run(
        'INSERT INTO sessions (sender, context, owner, registered_at, heartbeat, owner_process, clock_domain, heartbeat_mono) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [candidate, context, owner, now, ...beat(ctx)],
      );
      return candidate;
    }
    const verdict = judgeHolder(db, by, row, { record: true });
    if (!verdict.held) {
      db.run(`UPDATE sessions SET context = ?, owner = ?, registered_at = ?, ${BEAT_ASSIGNMENTS} WHERE sender = ?`, [
        context,
        owner,
        now,
        ...beat(ctx),
        candidate,
      ]);
      forgetSightings(db, candidate);
      ctx.log.info('name taken over from a stopped holder', { sender: candidate, reason: verdict.reason });
      return candidate;
    }
  }
  throw new BusError('internal', `no free display name for "${base}" after ${MAX_SUFFIX} suffixes`);
}

/** The unexpired subscriptions of `sender`, each with the number of messages it would still receive. */
export function subscriptionSummaries(ctx: BusContext, sender: string, now: number): { channel: string; pending: number }[] {
  const idleBefore = now - ctx.config.cursor_idle_hours * 3_600_000;
  const subs = ctx.db.all<{ channel: string; cursor_seq: number }>(
    'SELECT channel, cursor_seq FROM subscriptions WHERE sender = ? AND last_activity >= ? ORDER BY channel',
    [sender, idleBefore],
  );
  return subs.map((s) => {
    const after = deliverableAfter(s.channel, s.cursor_seq, sender);
    return { channel: s.channel, pending: ctx.db.get<{ n: number }>(`SELECT count(*) AS n FROM messages m WHERE ${after.sql}`, after.params)?.n ?? 0 };
  });
}

/** Refreshes the heartbeat of every session this process holds; returns how many it still holds. */
export function heartbeat(ctx: BusContext): number {
  return ctx.db.transaction(() => ctx.db.run(`UPDATE sessions SET ${BEAT_ASSIGNMENTS} WHERE owner = ?`, [...beat(ctx), ctx.owner]).changes);
}

/**
 * Gives up every name this process holds, at a clean shutdown, so the names
 * are free at once for every observer (one in another pid namespace could
 * not tell that this process exited). Subscriptions stay: they belong to the
 * name, and a later register resumes them. Returns how many.
 */
export function releaseSessions(ctx: BusContext): number {
  return ctx.db.transaction(() => {
    ctx.db.run('DELETE FROM session_sightings WHERE sender IN (SELECT sender FROM sessions WHERE owner = ?)', [ctx.owner]);
    return ctx.db.run('DELETE FROM sessions WHERE owner = ?', [ctx.owner]).changes;
  });
}

/**
 * The session `as` names, if this process holds it. Throws `not_registered`
 * otherwise (never registered, expired and taken by another process, or reset).
 * Call it inside the operation's transaction when the operation writes.
 */
export function requireSession(ctx: BusContext, as: string): Session {
  const row = ctx.db.get<SessionRow>('SELECT sender, context FROM sessions WHERE sender = ? AND owner = ?', [as, ctx.owner]);
  if (row === undefined) {
    throw new BusError(
      'not_registered',
      `as: "${as}" is not registered by this process (it may have expired and been taken over); call register and pass the display name it returns as \`as\``,
      { field: 'as' },
    );
  }
  return { sender: row.sender, context: row.context };
}

export const DiscoverInput = v.strictObject({ as: AsField });
export type DiscoverInput = v.InferInput<typeof DiscoverInput>;

/** The most offline names discover lists; past it `offline_more` is true. */
export const DISCOVER_OFFLINE_MAX = 256;

export const DiscoverOutput = v.object({
  /** The live sessions, by display name. */
  sessions: v.array(v.object({ display_name: v.string(), context: v.string(), registered_at: v.string() })),
  /** Names registered on this bus before but not live now, by name: a direct message to one waits for it. */
  offline: v.array(v.string()),
  /** True when more offline names exist than `offline` lists. */
  offline_more: v.boolean(),
});
export type DiscoverResult = v.InferOutput<typeof DiscoverOutput>;

/**
 * Who can be addressed: live sessions (holders judged not stopped, see
 * session-liveness.ts), by display name, and the names ever registered that
 * are not live (at most DISCOVER_OFFLINE_MAX).
 * With `discovery_enabled: false` this is a `validation` error rather than an
 * empty list, so an agent is told the directory is off instead of concluding
 * it is alone.
 */
export function discover(ctx: BusContext, rawInput: unknown): DiscoverResult {
  const input = parseInput(DiscoverInput, rawInput);
  if (!ctx.config.discovery_enabled) {
    throw new BusError('validation', 'discover is disabled by the configuration (discovery_enabled: false); message rows still name their sender');
  }
  return ctx.db.read(() => {
    requireSession(ctx, input.as);
    const by = observer(ctx.clock, ctx.owner);
    const rows = ctx.db
      .all<SessionRow>(`SELECT ${HOLDER_COLUMNS}, context, registered_at FROM sessions ORDER BY sender`)
      .filter((r) => judgeHolder(ctx.db, by, r, { record: false }).held);
    const live = new Set(rows.map((r) => r.sender));
    // Fetched past the cap by the live names, which the filter drops.
    const offline = ctx.db
      .all<{ name: string }>(`SELECT name FROM known_names ORDER BY name ${ctx.db.capabilities.dialect.limit}`, [DISCOVER_OFFLINE_MAX + 1 + live.size])
      .map((r) => r.name)
      .filter((name) => !live.has(name));
    return {
      sessions: rows.map((r) => ({ display_name: r.sender, context: r.context, registered_at: isoTime(r.registered_at) })),
      offline: offline.slice(0, DISCOVER_OFFLINE_MAX),
      offline_more: offline.length > DISCOVER_OFFLINE_MAX,
    };
  });
}
