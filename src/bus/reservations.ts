/**
 * File reservations: advisory claims of a display name on paths and globs of
 * one repository (reserve, release, list_reservations).
 *
 * Exclusive reservations are a readers-writer rule between display names:
 * an exclusive one overlaps nothing held by anyone else, a shared one
 * overlaps no one else's exclusive one. A request that breaks the rule is
 * refused whole with `conflict` and the holders, and nothing is reserved.
 * Reserving a pattern one already holds renews it (new expiry; mode and
 * reason as given, else kept; the original reservation time kept). Every
 * decision is made inside one write transaction, so of several processes
 * racing for overlapping exclusive patterns exactly one wins.
 *
 * Liveness (expiry, the holder's session) is reservations-live.ts; pattern
 * rules are reservations-patterns.ts; repository identity is
 * reservations-repository.ts.
 */
import * as v from 'valibot';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { AsField, heartbeat, requireSession } from './identity.js';
import { sameLineage } from './names.js';
import { filePatterns } from './reservations-files.js';
import { checkPattern, compiledOverlap, compilePattern, PATTERN_MAX_LENGTH, type CompiledPattern } from './reservations-patterns.js';
import { deleteDeadReservations, expiryColumns, liveReservations, type ReservationRow } from '../liveness/reservations-live.js';
import { cleanGitEnv, findRepository, RepositoryLookupError, type Repository } from './reservations-repository.js';
import { isStalled, recordTakeover, TAKEOVER_STALL_MS, takenKey, takenReservations, type TakenFrom } from './reservations-takeover.js';
import { isoTime } from './time.js';
import { invalid, parseInput } from './validate.js';

/** A reservation lasts this long unless the caller says otherwise. */
export const DEFAULT_TTL_SECONDS = 3600;
/** The longest a reservation may last before it must be renewed. */
export const MAX_TTL_SECONDS = 86_400;
/** Patterns in one call. */
export const MAX_PATTERNS_PER_CALL = 100;
/** Live reservations one display name may hold in one repository. */
export const MAX_RESERVATIONS_PER_HOLDER = 1000;
/** Conflicting holders listed in one `conflict` error (the message says how many there were). */
export const MAX_HOLDERS_LISTED = 50;
const REASON_MAX = 512;
const REPOSITORY_MAX = 4096;
// Far more than any repository's reservations; bounds the cleanup inside a reserve.
const CLEANUP_LIMIT = 100_000;

const PatternField = v.pipe(
  v.string('must be a string: a path or glob relative to the repository root, e.g. "src/cli/**"'),
  v.minLength(1, 'must not be empty: a path or glob relative to the repository root, e.g. "src/cli/**"'),
  v.maxLength(PATTERN_MAX_LENGTH, `must be at most ${PATTERN_MAX_LENGTH} characters`),
  v.description(
    'A path or glob from the repository root: "src/cli/main.ts" (a file), "src/cli" (a directory and all below it), "src/**" (everything under src), "**/*.md" (any depth), "*.md" (root only). * and ? never cross "/"; no absolute paths, "..", braces.',
  ),
);

const pathsField = (what: string) =>
  v.pipe(
    v.array(PatternField, 'must be an array of paths or globs relative to the repository root, e.g. ["src/cli/**", "README.md"]'),
    v.minLength(1, 'must name at least one path or glob, e.g. ["src/cli/**"]'),
    v.maxLength(MAX_PATTERNS_PER_CALL, `must have at most ${MAX_PATTERNS_PER_CALL} entries; reserve a directory or a glob instead of many files`),
    v.description(what),
  );

const RepositoryField = v.pipe(
  v.string('must be a string: the absolute path of a directory inside the git repository'),
  v.minLength(1, 'must not be empty; omit it to use the agentbus server\'s working directory'),
  v.maxLength(REPOSITORY_MAX, `must be at most ${REPOSITORY_MAX} characters`),
  v.regex(
    /^\/[^\u0000-\u001f\u007f-\u009f]*$/,
    'must be an absolute path of a directory inside the git repository, without control characters, e.g. "/home/me/project"',
  ),
  v.description(
    'Absolute path of any directory in your checkout. Default: the agentbus server\'s working directory (your project). All worktrees of one clone are one repository.',
  ),
);

const ReasonField = v.pipe(
  v.string('must be a string: why you reserve these paths, shown to anyone who conflicts'),
  v.minLength(1, 'must not be empty; omit it to give no reason'),
  v.maxLength(REASON_MAX, `must be at most ${REASON_MAX} characters`),
  v.regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'must not contain control characters (keep it to one line)'),
  v.description(`Why, in one line (at most ${REASON_MAX} characters), shown to anyone your reservation refuses. On renewal, omit it to keep the old one.`),
);

export const ReserveInput = v.strictObject({
  as: AsField,
  paths: pathsField(`The paths or globs to reserve, 1-${MAX_PATTERNS_PER_CALL}. All are granted or none is. Ones you already hold are renewed.`),
  exclusive: v.optional(
    v.pipe(
      v.boolean('must be true (only you) or false (shared with other shared holders)'),
      v.description(
        'Default true for a new reservation: no one else may reserve overlapping paths, and the commit guard refuses their commits on them. false: shared, others may share it. On renewal, omit it to keep the mode.',
      ),
    ),
  ),
  ttl_seconds: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.integer('must be a whole number of seconds'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(MAX_TTL_SECONDS, `must be at most ${MAX_TTL_SECONDS} (24 h); reserve again to renew`),
      v.description(`How long the reservation lasts from now, default ${DEFAULT_TTL_SECONDS} (1 h), at most ${MAX_TTL_SECONDS}; reserve again to renew. It also ends when you release it or your session ends.`),
    ),
  ),
  extend_seconds: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.integer('must be a whole number of seconds'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(MAX_TTL_SECONDS, `must be at most ${MAX_TTL_SECONDS} (24 h)`),
      v.description(
        `Instead of ttl_seconds: renew by this many seconds from the later of now and the current expiry (a pattern you do not hold yet: from now). The result may end at most ${MAX_TTL_SECONDS} s (24 h) from now.`,
      ),
    ),
  ),
  reason: v.optional(ReasonField),
  take_over: v.optional(
    v.pipe(
      v.boolean('must be true (take overlapping claims of stalled holders) or false'),
      v.description(
        `true: where another agent's reservation is in the way, take it over if its holder has stalled (its session made no progress, no heartbeat and so no tool call, for ${TAKEOVER_STALL_MS / 60_000} minutes; an idle but running agent has not stalled). The holder is told in its next receive. Refused (conflict) while any holder in the way is active.`,
      ),
    ),
  ),
  repository: v.optional(RepositoryField),
});
export type ReserveInput = v.InferInput<typeof ReserveInput>;

/** One reservation as the tools show it. */
export const ReservationOutput = v.object({
  pattern: v.string(),
  display_name: v.string(),
  exclusive: v.boolean(),
  reason: v.nullable(v.string()),
  reserved_at: v.string(),
  expires_at: v.string(),
  /** Set when the reservation was taken over from a stalled holder: whom from. */
  taken_from: v.optional(v.string()),
  /** When it was taken over. */
  taken_at: v.optional(v.string()),
});
export type Reservation = v.InferOutput<typeof ReservationOutput>;

/** A reservation listed against requested patterns: which of them it overlaps. */
const OverlappingReservation = v.object({ ...ReservationOutput.entries, overlaps: v.array(v.string()) });

export const ReserveOutput = v.object({
  /** The repository identity: its git common directory. */
  repository: v.string(),
  /** Every pattern of the call, as now held. */
  reservations: v.array(ReservationOutput),
  /** The patterns that were already held and got renewed. */
  renewed: v.array(v.string()),
});
export type ReserveResult = v.InferOutput<typeof ReserveOutput>;

/** The extra field of a `conflict` error from reserve. */
export const ReserveErrorDetails = v.object({ holders: v.optional(v.array(OverlappingReservation)) });

export const ReleaseInput = v.strictObject({
  as: AsField,
  paths: v.optional(pathsField('The patterns to release, exactly as reserved. Default: all of yours in the repository.')),
  repository: v.optional(RepositoryField),
});
export type ReleaseInput = v.InferInput<typeof ReleaseInput>;

export const ReleaseOutput = v.object({
  repository: v.string(),
  /** Patterns released. */
  released: v.array(v.string()),
  /** Requested patterns you did not hold (spelled differently, never reserved, or already ended). */
  not_held: v.array(v.string()),
});
export type ReleaseResult = v.InferOutput<typeof ReleaseOutput>;

export const ListReservationsInput = v.strictObject({
  as: AsField,
  mine: v.optional(
    v.pipe(v.boolean('must be true (only yours) or false (everyone\'s)'), v.description('Default false: everyone\'s reservations. true: only yours.')),
    false,
  ),
  paths: v.optional(pathsField('Only the reservations overlapping one of these paths or globs (what you would conflict with); each lists which it overlaps. Default: all.')),
  repository: v.optional(RepositoryField),
});
export type ListReservationsInput = v.InferInput<typeof ListReservationsInput>;

export const ListReservationsOutput = v.object({
  repository: v.string(),
  /** With `paths`: each reservation lists the given patterns it overlaps. */
  reservations: v.array(v.object({ ...ReservationOutput.entries, overlaps: v.optional(v.array(v.string())) })),
});
export type ListReservationsResult = v.InferOutput<typeof ListReservationsOutput>;

function toReservation(row: ReservationRow, taken?: TakenFrom): Reservation {
  return {
    pattern: row.pattern,
    display_name: row.holder,
    exclusive: row.exclusive === 1,
    reason: row.reason,
    reserved_at: isoTime(row.reserved_at),
    expires_at: isoTime(row.expires_at),
    ...(taken === undefined ? {} : { taken_from: taken.from, taken_at: isoTime(taken.at) }),
  };
}

/** Checks each pattern (field `paths.N`) and returns the canonical ones, first occurrence kept. */
function checkPatterns(raw: readonly string[]): string[] {
  const out: string[] = [];
  raw.forEach((text, i) => {
    const checked = checkPattern(text);
    if (!checked.ok) throw invalid(`paths.${i}`, checked.problem);
    if (!out.includes(checked.pattern)) out.push(checked.pattern);
  });
  return out;
}

/** The repository `repository` names, else the one holding the server's working directory. Runs git: call outside transactions. */
export function resolveRepository(ctx: BusContext, repository: string | undefined): Repository {
  const dir = repository ?? ctx.workingDirectory;
  if (dir === undefined) {
    throw invalid('repository', 'is required here: the absolute path of a directory inside the git repository');
  }
  try {
    return findRepository(dir, { env: cleanGitEnv(process.env) });
  } catch (error) {
    if (!(error instanceof RepositoryLookupError)) throw error;
    if (error.code === 'git_unavailable') throw new BusError('internal', error.message, { retryable: false });
    if (repository !== undefined) throw invalid('repository', `${error.message}; pass the absolute path of a directory inside the git repository`);
    throw invalid(
      'repository',
      `is required: the agentbus server's working directory is not in a git repository (${error.message}); pass the absolute path of your checkout as repository`,
    );
  }
}

function conflictError(conflicts: Map<ReservationRow, string[]>, active: readonly string[] = []): BusError {
  const entries = [...conflicts.entries()];
  const holders = entries.slice(0, MAX_HOLDERS_LISTED).map(([row, overlaps]) => ({ ...toReservation(row), overlaps }));
  const described = entries.slice(0, 5).map(([row, overlaps]) => {
    const why = row.reason === null ? '' : `reason: ${row.reason}; `;
    return `${overlaps.map((p) => `"${p}"`).join(', ')} overlaps ${row.holder}'s ${row.exclusive === 1 ? 'exclusive' : 'shared'} reservation "${row.pattern}" (${why}since ${isoTime(row.reserved_at)}, expires ${isoTime(row.expires_at)})`;
  });
  const more = entries.length > 5 ? `; and ${entries.length - 5} more (${Math.min(entries.length, MAX_HOLDERS_LISTED)} listed in holders)` : '';
  const names = [...new Set(entries.map(([row]) => row.holder))].join(', ');
  const takeOver =
    active.length === 0
      ? ''
      : ` take_over refused: ${active.join(', ')} made progress within the last ${TAKEOVER_STALL_MS / 60_000} minutes (an active holder's claims cannot be taken).`;
  return new BusError(
    'conflict',
    `paths: nothing was reserved: ${described.join('; ')}${more}.${takeOver} Ask ${names} (send a message), wait until the reservation ends, or work on other paths.`,
    { field: 'paths', details: { holders } },
  );
}

/** The stored reservations of `repository` that name files (sql/0010), as `holder\0pattern` keys. Call inside a transaction. */
function storedFiles(ctx: BusContext, repository: string): Set<string> {
  const rows = ctx.db.all<{ holder: string; pattern: string }>('SELECT holder, pattern FROM reservations WHERE repository = ? AND file = 1', [repository]);
  return new Set(rows.map((r) => `${r.holder}\0${r.pattern}`));
}

/** A live row compiled for overlap, a file where its maker's worktree said so. */
function compiledRow(row: ReservationRow, files: ReadonlySet<string>): CompiledPattern {
  return compilePattern(row.pattern, { file: files.has(`${row.holder}\0${row.pattern}`) });
}

/**
 * With `take_over`, ends the claims in the way when every holder of them has
 * stalled (reservations-takeover.ts), telling each holder, and returns per
 * requested pattern the holders it was taken from. Throws `conflict`
 * otherwise, naming the active holders when a takeover was asked for.
 */
function takeOver(ctx: BusContext, asked: boolean, conflicts: Map<ReservationRow, string[]>, sender: string, now: number): Map<string, string[]> {
  if (!asked) throw conflictError(conflicts);
  const holders = [...new Set([...conflicts.keys()].map((r) => r.holder))];
  const active = holders.filter((h) => !isStalled(ctx.db, ctx, h));
  if (active.length > 0) throw conflictError(conflicts, active);
  const taken = new Map<string, string[]>();
  for (const [row, overlaps] of conflicts) {
    ctx.db.run('DELETE FROM reservations WHERE repository = ? AND holder = ? AND pattern = ?', [row.repository, row.holder, row.pattern]);
    recordTakeover(ctx.db, { holder: row.holder, repository: row.repository, pattern: row.pattern, takenBy: sender, now });
    for (const p of overlaps) taken.set(p, [...new Set([...(taken.get(p) ?? []), row.holder])]);
  }
  ctx.log.info('reservations taken over', { sender, from: holders.join(', '), count: conflicts.size });
  return taken;
}

/**
 * How long from now each pattern's reservation lasts, ms: `ttl_seconds`
 * (default DEFAULT_TTL_SECONDS), or with `extend_seconds` the later of now
 * and the held expiry plus the extension. Throws `validation` when both are
 * given, or an extension would end more than MAX_TTL_SECONDS from now.
 */
function lifetimes(input: v.InferOutput<typeof ReserveInput>, patterns: readonly string[], mine: ReadonlyMap<string, ReservationRow>, now: number): Map<string, number> {
  if (input.extend_seconds === undefined) return new Map(patterns.map((p) => [p, (input.ttl_seconds ?? DEFAULT_TTL_SECONDS) * 1000]));
  if (input.ttl_seconds !== undefined) {
    throw invalid('extend_seconds', 'cannot be given with ttl_seconds: ttl_seconds sets the lifetime from now, extend_seconds adds to the current one; give one of them');
  }
  const extension = input.extend_seconds * 1000;
  const out = new Map<string, number>();
  for (const p of patterns) {
    const left = Math.max(0, (mine.get(p)?.expires_at ?? now) - now);
    if (left + extension > MAX_TTL_SECONDS * 1000) {
      throw invalid(
        'extend_seconds',
        `would make "${p}" end ${Math.ceil((left + extension) / 1000)} s from now, more than ${MAX_TTL_SECONDS} (24 h); nothing was reserved. Extend by at most ${Math.floor((MAX_TTL_SECONDS * 1000 - left) / 1000)} s`,
      );
    }
    out.set(p, left + extension);
  }
  return out;
}

/** Every live reservation of another name that one of `patterns` overlaps (either side exclusive), with the patterns that overlap it. */
function findConflicts(
  ctx: BusContext,
  repository: string,
  patterns: readonly string[],
  files: ReadonlySet<string>,
  others: readonly ReservationRow[],
  exclusiveOf: (pattern: string) => boolean,
): Map<ReservationRow, string[]> {
  const conflicts = new Map<ReservationRow, string[]>();
  const stored = storedFiles(ctx, repository);
  const othersCompiled = others.map((row) => ({ row, compiled: compiledRow(row, stored) }));
  for (const pattern of patterns) {
    const exclusive = exclusiveOf(pattern);
    const compiled = compilePattern(pattern, { file: files.has(pattern) });
    for (const { row: other, compiled: theirs } of othersCompiled) {
      if ((exclusive || other.exclusive === 1) && compiledOverlap(compiled, theirs)) {
        const overlaps = conflicts.get(other) ?? [];
        overlaps.push(pattern);
        conflicts.set(other, overlaps);
      }
    }
  }
  return conflicts;
}

/** Inserts or renews one reservation row; a takeover's `takenFrom` is recorded, and kept on a later renewal. */
function writeReservation(
  ctx: BusContext,
  row: ReservationRow,
  expiry: ReturnType<typeof expiryColumns>,
  extra: { readonly file: boolean; readonly takenFrom: string | null; readonly now: number },
): void {
  const from = extra.takenFrom;
  ctx.db.run(
    `INSERT INTO reservations (repository, pattern, holder, owner, exclusive, reason, reserved_at, expires_at, clock_domain, expires_mono, file, taken_from, taken_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (repository, holder, pattern) DO UPDATE SET
       owner = excluded.owner, exclusive = excluded.exclusive, reason = excluded.reason, reserved_at = excluded.reserved_at,
       expires_at = excluded.expires_at, clock_domain = excluded.clock_domain, expires_mono = excluded.expires_mono, file = excluded.file,
       taken_from = coalesce(excluded.taken_from, reservations.taken_from), taken_at = coalesce(excluded.taken_at, reservations.taken_at)`,
    [
      row.repository, row.pattern, row.holder, ctx.owner, row.exclusive, row.reason, row.reserved_at, row.expires_at,
      expiry.clock_domain, expiry.expires_mono, extra.file ? 1 : null, from, from === null ? null : extra.now,
    ],
  );
}

/**
 * Reserves `paths` in the repository for the caller, or renews the ones it
 * holds. A name's line of descent (sameLineage: a parent and its children)
 * never conflicts with itself: a subagent reserves inside its parent's claim. Throws `conflict` (with `holders`) when another display name's
 * live reservation is in the way, `validation`, `not_registered`.
 */
export function reserve(ctx: BusContext, rawInput: unknown): ReserveResult {
  const input = parseInput(ReserveInput, rawInput);
  const patterns = checkPatterns(input.paths);
  const repository = resolveRepository(ctx, input.repository);
  const files = filePatterns(repository.root, patterns, cleanGitEnv(process.env));
  const { db } = ctx;
  return db.transaction(() => {
    const now = ctx.clock.now();
    const { sender } = requireSession(ctx, input.as);
    // Reserving is proof of life: a reservation must be live the moment it is granted.
    heartbeat(ctx);
    // Claims judged dead are gone before anyone is granted an overlapping one, so they can never revive beside it.
    deleteDeadReservations(db, ctx, CLEANUP_LIMIT, repository.id);
    const live = liveReservations(db, ctx, { repository: repository.id });
    const mine = new Map(live.filter((r) => r.holder === sender).map((r) => [r.pattern, r]));
    const others = live.filter((r) => !sameLineage(r.holder, sender));
    const exclusiveOf = (pattern: string): boolean => input.exclusive ?? (mine.get(pattern)?.exclusive ?? 1) === 1;

    const conflicts = findConflicts(ctx, repository.id, patterns, files, others, exclusiveOf);
    const taken = conflicts.size === 0 ? new Map<string, string[]>() : takeOver(ctx, input.take_over === true, conflicts, sender, now);

    const added = patterns.filter((p) => !mine.has(p)).length;
    if (mine.size + added > MAX_RESERVATIONS_PER_HOLDER) {
      throw invalid(
        'paths',
        `you would hold ${mine.size + added} reservations in this repository, more than ${MAX_RESERVATIONS_PER_HOLDER}; release some, or reserve a directory or glob instead of single files`,
      );
    }
    const lasts = lifetimes(input, patterns, mine, now);
    const renewed: string[] = [];
    const rows: ReservationRow[] = [];
    for (const pattern of patterns) {
      const held = mine.get(pattern);
      if (held !== undefined) renewed.push(pattern);
      const expiry = expiryColumns(ctx, lasts.get(pattern)!);
      const row: ReservationRow = {
        repository: repository.id,
        pattern,
        holder: sender,
        exclusive: exclusiveOf(pattern) ? 1 : 0,
        reason: input.reason ?? held?.reason ?? null,
        reserved_at: taken.has(pattern) ? now : (held?.reserved_at ?? now),
        expires_at: expiry.expires_at,
      };
      writeReservation(ctx, row, expiry, { file: files.has(pattern), takenFrom: taken.get(pattern)?.join(', ') ?? null, now });
      rows.push(row);
    }
    const takenNow = takenReservations(db, repository.id);
    const reservations = rows.map((r) => toReservation(r, takenNow.get(takenKey(r.repository, r.holder, r.pattern))));
    ctx.log.info('reserved', { sender, patterns: patterns.length, renewed: renewed.length, exclusive: input.exclusive ?? null });
    return { repository: repository.id, reservations, renewed };
  });
}

/**
 * Releases the caller's reservations of `paths` (exact patterns, as
 * reserved) in the repository, or all of them when `paths` is absent.
 * Throws `validation`, `not_registered`.
 */
export function release(ctx: BusContext, rawInput: unknown): ReleaseResult {
  const input = parseInput(ReleaseInput, rawInput);
  const patterns = input.paths === undefined ? undefined : checkPatterns(input.paths);
  const repository = resolveRepository(ctx, input.repository);
  const { db } = ctx;
  return db.transaction(() => {
    const { sender } = requireSession(ctx, input.as);
    deleteDeadReservations(db, ctx, CLEANUP_LIMIT, repository.id);
    const held = db
      .all<{ pattern: string }>('SELECT pattern FROM reservations WHERE repository = ? AND holder = ? ORDER BY pattern', [repository.id, sender])
      .map((r) => r.pattern);
    const released = patterns === undefined ? held : patterns.filter((p) => held.includes(p));
    for (const pattern of released) {
      db.run('DELETE FROM reservations WHERE repository = ? AND holder = ? AND pattern = ?', [repository.id, sender, pattern]);
    }
    const notHeld = patterns === undefined ? [] : patterns.filter((p) => !held.includes(p));
    ctx.log.info('released', { sender, released: released.length });
    return { repository: repository.id, released, not_held: notHeld };
  });
}

/**
 * The live reservations of the repository: everyone's, or the caller's with
 * `mine`; with `paths`, only those overlapping one of them (what an
 * exclusive reservation of `paths` would conflict with, plus your own).
 * Throws `validation`, `not_registered`.
 */
export function listReservations(ctx: BusContext, rawInput: unknown): ListReservationsResult {
  const input = parseInput(ListReservationsInput, rawInput);
  const patterns = input.paths === undefined ? undefined : checkPatterns(input.paths);
  const repository = resolveRepository(ctx, input.repository);
  const files = patterns === undefined ? new Set<string>() : filePatterns(repository.root, patterns, cleanGitEnv(process.env));
  return ctx.db.read(() => {
    const { sender } = requireSession(ctx, input.as);
    const rows = liveReservations(ctx.db, ctx, { repository: repository.id }).filter((r) => !input.mine || r.holder === sender);
    const asked = patterns?.map((p) => ({ text: p, compiled: compilePattern(p, { file: files.has(p) }) }));
    const stored = asked === undefined ? new Set<string>() : storedFiles(ctx, repository.id);
    const taken = takenReservations(ctx.db, repository.id);
    const reservations = rows.flatMap((row) => {
      const shown = toReservation(row, taken.get(takenKey(row.repository, row.holder, row.pattern)));
      if (asked === undefined) return [shown];
      const theirs = compiledRow(row, stored);
      const overlaps = asked.filter((p) => compiledOverlap(p.compiled, theirs)).map((p) => p.text);
      return overlaps.length === 0 ? [] : [{ ...shown, overlaps }];
    });
    return { repository: repository.id, reservations };
  });
}
