/**
 * Which repository a reservation is in.
 *
 * A repository is identified by its git common directory (the `.git`
 * directory every worktree of one clone shares), resolved to a real path.
 * So the worktrees of one clone are joined: they share one object store and
 * their branches merge into each other, so an exclusive claim on a file in
 * one worktree is a claim on it in every other (two agents editing it on two
 * branches is the merge conflict reservations exist to avoid). Separate
 * clones are told apart: a clone is a deliberate separate copy (a fork, an
 * experiment, another machine's mirror), and joining clones would need a
 * guess (remote URL, root commit) that forks and renamed remotes defeat.
 * Symbolic links to a repository resolve to the same identity.
 *
 * Both sides ask git itself (`git rev-parse`), so the MCP server and the
 * commit guard agree on every layout git supports (worktrees, submodules,
 * `--separate-git-dir`).
 */
import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** A resolved repository. */
export interface Repository {
  /** The identity: the real path of the git common directory, shared by all worktrees of one clone. */
  readonly id: string;
  /** The top of the worktree the lookup started in; patterns are relative to it. */
  readonly root: string;
}

/** Why a directory has no repository: a sentence for a person, and whether git itself is missing. */
export class RepositoryLookupError extends Error {
  override readonly name = 'RepositoryLookupError';
  /** `not_a_repository` (the directory is outside any worktree, or missing), `git_unavailable` (no git to ask). */
  readonly code: 'not_a_repository' | 'git_unavailable';
  constructor(code: 'not_a_repository' | 'git_unavailable', message: string) {
    super(message);
    this.code = code;
  }
}

export interface RepositoryLookupOptions {
  /**
   * The environment git runs with. Variables that point git elsewhere
   * (GIT_DIR, GIT_WORK_TREE, ...) are honoured: inside a git hook they are
   * how git says which repository is committing. Callers that identify a
   * directory given by someone else strip them (see cleanGitEnv).
   */
  readonly env: NodeJS.ProcessEnv;
}

/** `env` without the variables that would make git look at another repository than the directory asked about. */
export function cleanGitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (!/^GIT_(DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CEILING_DIRECTORIES|NAMESPACE|PREFIX)$/.test(key)) clean[key] = value;
  }
  return clean;
}

/** The repository holding `dir`; throws RepositoryLookupError. */
export function findRepository(dir: string, options: RepositoryLookupOptions): Repository {
  // A missing working directory makes spawning git fail exactly like a missing git.
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new RepositoryLookupError('not_a_repository', `${dir} does not exist or is not a directory`);
  }
  let out: string;
  try {
    out = execFileSync('git', ['rev-parse', '--git-common-dir', '--show-toplevel'], {
      cwd: dir,
      env: options.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new RepositoryLookupError('git_unavailable', 'git is not installed or not on PATH; reservations need git to identify the repository');
    }
    const reason = typeof e.stderr === 'string' && e.stderr.trim() !== '' ? e.stderr.trim().split('\n')[0] : e.message;
    throw new RepositoryLookupError('not_a_repository', `${dir} is not inside a git worktree (${reason})`);
  }
  const [commonDir, top] = out.split('\n');
  if (commonDir === undefined || commonDir === '' || top === undefined || top === '') {
    throw new RepositoryLookupError('not_a_repository', `${dir} is not inside a git worktree (git printed no worktree top)`);
  }
  // git prints the common directory relative to where it ran when it is below it.
  return { id: realpathSync(resolve(dir, commonDir)), root: realpathSync(top) };
}

/** A short name for a repository identity: the directory holding `.git`, else the git directory itself. */
export function repositoryLabel(id: string): string {
  return basename(id) === '.git' ? dirname(id) : id;
}
