/**
 * The commit guard's check: the staged paths of the commit in progress
 * against the live exclusive reservations of other agents in the same
 * repository. It only reads: the database is opened without the set-up
 * lock, creation or migrations (a database older than reservations holds
 * none), with the driver its lock protocol names.
 */
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { hasReservations, liveReservations, type ReservationRow } from '../../../liveness/reservations-live.js';
import { PathIndex } from '../../../bus/reservations-path-index.js';
import { findRepository } from '../../../bus/reservations-repository.js';
import type { Clock } from '../../../clock.js';
import type { Config } from '../../../config.js';
import type { LockProtocol } from '../../../db/contract/driver.js';
import { Database } from '../../../db/contract/database.js';
import { readFileState } from '../../../db/storage/file-header.js';
import { lostDatabaseMessage } from '../../../db/storage/lost-database.js';
import { databasePath } from '../../../db/open/open-database.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';
import type { Committer } from './guard-committer.js';

/** How long the guard's read waits on another process's lock before it gives up (and lets the commit through). */
const GUARD_BUSY_TIMEOUT_MS = 2000;

/** How long one call to a server bus may take, round trip included, before the guard gives up (and lets the commit through with a warning). */
const GUARD_SERVER_DEADLINE_MS = 5000;

/** A staged path that hits another agent's exclusive reservation. */
export interface GuardHit {
  /** The staged path, relative to the worktree top. */
  readonly path: string;
  /** The reservation it hits. */
  readonly reservation: ReservationRow;
}

export type GuardVerdict =
  /** Nothing staged hits another agent's exclusive reservation. */
  | { readonly kind: 'allowed'; readonly staged: number }
  /** Some staged paths do; `hits` in staged order. */
  | { readonly kind: 'refused'; readonly hits: readonly GuardHit[] }
  /** The check could not be made for a reason that is no one's fault (no database yet). */
  | { readonly kind: 'unchecked'; readonly reason: string }
  /** This Node cannot load the driver the database's lock protocol needs (a Node 20 and a posix bus). */
  | { readonly kind: 'wrong_node'; readonly protocol: LockProtocol };

/** The NUL-separated paths git prints for `args` in `cwd`, each once; `what` names the list in an error. */
function gitPaths(cwd: string, env: NodeJS.ProcessEnv, args: readonly string[], what: string): string[] {
  let out: string;
  try {
    out = execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n')[0];
    throw new Error(`git could not list ${what} in ${cwd}: ${stderr || (error as Error).message}`);
  }
  // `git log -z` separates commits with a newline before the next commit's first path.
  return [...new Set(out.split('\0').map((p) => p.replace(/^\n+/, '')).filter((p) => p !== ''))];
}

/** The paths the commit in progress changes, adds or deletes (both sides of a rename), relative to the worktree top. */
export function stagedPaths(cwd: string, env: NodeJS.ProcessEnv): string[] {
  // Inside a hook, GIT_INDEX_FILE names the index being committed (`commit -a` and `commit <paths>` use a temporary one).
  return gitPaths(cwd, env, ['diff', '--cached', '--name-only', '-z', '--no-renames', '--no-ext-diff'], 'the staged files');
}

/** The commits a pre-push hook is told about (its stdin: `<local ref> <local sha> <remote ref> <remote sha>` per line) that no remote has yet. */
function pushedRange(refLines: string): string[] | undefined {
  const zero = /^0+$/;
  const tips: string[] = [];
  const known: string[] = [];
  for (const line of refLines.split('\n')) {
    const [, localSha, , remoteSha] = line.trim().split(/\s+/);
    // A deletion pushes no commit.
    if (localSha === undefined || remoteSha === undefined || zero.test(localSha)) continue;
    tips.push(localSha);
    if (!zero.test(remoteSha)) known.push(remoteSha);
  }
  return tips.length === 0 ? undefined : [...tips, '--not', '--remotes', ...known];
}

/**
 * The paths changed by the commits being pushed (merges aside: their changes
 * are their parents'), each once: the commits reachable from the pushed tips
 * that are neither on a remote-tracking branch nor below the remote's
 * current tip. Read from the hook's stdin, `refLines`.
 */
export function pushedPaths(cwd: string, env: NodeJS.ProcessEnv, refLines: string): string[] {
  const range = pushedRange(refLines);
  if (range === undefined) return [];
  // --ignore-missing: the remote's tip may be a commit this clone never fetched.
  const args = ['log', '--format=', '--name-only', '-z', '--no-renames', '--no-merges', '--no-ext-diff', '--ignore-missing', ...range];
  return gitPaths(cwd, env, args, 'the commits being pushed');
}

/** Opens the existing database for reading, or says why there is nothing to read, or which protocol this Node cannot read. Throws on a damaged or foreign file. */
async function openExisting(config: Config): Promise<Database | string | { readonly protocol: LockProtocol }> {
  if (config.database_url !== undefined) return openServer({ ...config, database_url: config.database_url });
  const path = databasePath(config.data_directory);
  const state = readFileState(path);
  // An emptied file where a bus was is not "nothing reserved yet": the reservations were lost with it.
  const lost = lostDatabaseMessage(path, dirname(path), state);
  if (lost !== undefined) return `file reservations cannot be checked: ${lost}`;
  if (state.kind === 'missing' || state.kind === 'empty') return `there is no agentbus database at ${path} yet, so nothing is reserved`;
  if (state.kind === 'foreign') throw new Error(state.reason);
  const loaded = await loadDriver(DRIVER_FOR_PROTOCOL[state.protocol]);
  if (!loaded.ok) return { protocol: state.protocol };
  return new Database(loaded.driver.open(path, { busyTimeoutMs: GUARD_BUSY_TIMEOUT_MS }));
}

/** The bus on the server database_url names, read whatever its schema; a server without a bus yet reserves nothing. */
async function openServer(config: Config & { readonly database_url: string }): Promise<Database | string> {
  // A file of its own in the bundle (scripts/build.js, ON_DEMAND): a SQLite user's guard never loads it.
  const { connectServerBus } = await import('../../server-database.js');
  const db = await connectServerBus(config, { busyTimeoutMs: GUARD_BUSY_TIMEOUT_MS, deadlineMs: GUARD_SERVER_DEADLINE_MS });
  try {
    if (db.get(db.capabilities.dialect.tableExists, ['schema_migrations']) !== undefined) return db;
  } catch (error) {
    db.close();
    throw error;
  }
  db.close();
  return `there is no bus on ${db.path} yet (no agent has started there), so nothing is reserved`;
}

/** Live exclusive reservations of others that cover one of `paths`, per path in order. */
export function findHits(paths: readonly string[], reservations: readonly ReservationRow[], committer: Committer | undefined): GuardHit[] {
  const index = new PathIndex<ReservationRow>();
  for (const r of reservations) if (r.exclusive === 1 && committer?.owns(r.holder) !== true) index.add(r.pattern, r);
  return paths.flatMap((path) => index.covering(path).map((reservation) => ({ path, reservation })));
}

export interface GuardCheckOptions {
  /** The worktree the commit is made in (git runs hooks at its top). */
  readonly cwd: string;
  /** The hook's environment, passed to git unchanged. */
  readonly env: NodeJS.ProcessEnv;
  /** The configuration naming the data directory. */
  readonly config: Config;
  /** The committing agent, when known. */
  readonly committer: Committer | undefined;
  /** The time source: wall time for reservation expiry, monotonic time for judging the holders' sessions. */
  readonly clock: Clock;
  /** For a pre-push check: the refs git said it pushes (the hook's stdin); absent for the pre-commit check of the staged paths. */
  readonly pushed?: string;
}

/** Runs the check. Throws on anything broken (git, the database); the command turns that into a warning. */
export async function checkCommit(options: GuardCheckOptions): Promise<GuardVerdict> {
  let staged: string[];
  try {
    staged = options.pushed === undefined ? stagedPaths(options.cwd, options.env) : pushedPaths(options.cwd, options.env, options.pushed);
  } catch (error) {
    // Outside a repository `git diff --cached` fails as a diff of two files would; say what is really wrong.
    findRepository(options.cwd, { env: options.env });
    throw error;
  }
  if (staged.length === 0) return { kind: 'allowed', staged: 0 };
  const repository = findRepository(options.cwd, { env: options.env });
  const db = await openExisting(options.config);
  if (typeof db === 'string') return { kind: 'unchecked', reason: db };
  // Not `instanceof Database`: a server bus's Database comes from a bundle file of its own (ON_DEMAND), with its own copy of the class.
  if ('protocol' in db) return { kind: 'wrong_node', protocol: db.protocol };
  let reservations: ReservationRow[];
  try {
    reservations = db.read(() =>
      hasReservations(db) ? liveReservations(db, { clock: options.clock, owner: 'guard' }, { repository: repository.id, exclusiveOnly: true }) : [],
    );
  } finally {
    db.close();
  }
  const hits = findHits(staged, reservations, options.committer);
  return hits.length === 0 ? { kind: 'allowed', staged: staged.length } : { kind: 'refused', hits };
}
