/**
 * `agentbus guard`: the git pre-commit check (exit 0 allow, 3 refuse), and
 * `agentbus guard --install` to put it into the repository's hooks.
 *
 * The check never blocks a commit because agentbus itself is broken: a
 * missing, locked, damaged or foreign database, a bad config, git failing,
 * any internal error: all warn on stderr and exit 0. Only a staged path
 * covered by another agent's live exclusive reservation refuses.
 *
 * It is loaded only for `guard` (src/cli/entries/guard.ts) and imports only
 * what the check needs (no MCP server, no embeddings): it runs on every commit.
 */
import { resolve } from 'node:path';
import { repositoryLabel } from '../bus/reservations-repository.js';
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { commandConfig, configFlag, flagSet } from './cli-config.js';
import { remaining } from './format.js';
import { checkCommit, type GuardHit } from './guard-check.js';
import { committingAgent, COMMITTER_ENV, type Committer } from './guard-committer.js';
import { installGuard } from './guard-install.js';

/** Hits listed in a refusal; the rest are counted. */
const HITS_SHOWN = 20;

function describeHit(hit: GuardHit, now: number): string {
  const r = hit.reservation;
  const why = r.reason === null ? '' : `: ${r.reason}`;
  return `  ${hit.path}  reserved by ${r.holder} ("${r.pattern}", exclusive, expires ${new Date(r.expires_at).toISOString()}, ${remaining(now, r.expires_at)})${why}`;
}

function refusalText(hits: readonly GuardHit[], committer: Committer | undefined, repository: string, now: number): string {
  const holders = [...new Set(hits.map((h) => h.reservation.holder))];
  const lines = [
    `agentbus guard: commit refused: it touches files ${holders.join(', ')} reserved exclusively in ${repository}:`,
    ...hits.slice(0, HITS_SHOWN).map((h) => describeHit(h, now)),
  ];
  if (hits.length > HITS_SHOWN) lines.push(`  ... and ${hits.length - HITS_SHOWN} more`);
  lines.push(
    committer === undefined
      ? `The committer is not known (no --as, ${COMMITTER_ENV}, or .local/agentbus.json), so every agent's exclusive reservation counts; if you hold these, commit with ${COMMITTER_ENV}=<your display name>.`
      : `Committing as ${committer.description}.`,
    `Ask ${holders.join(', ')} to release (an agentbus message away), wait until the reservation ends, unstage those files, or commit anyway with \`git commit --no-verify\`.`,
  );
  return `${lines.join('\n')}\n`;
}

async function check(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  const now = io.clock.now();
  const committer = committingAgent(io.env, io.cwd, flags.as);
  const config = commandConfig(io, flags);
  const verdict = await checkCommit({ cwd: io.cwd, env: io.env, config, committer, clock: io.clock });
  if (verdict.kind === 'unchecked') {
    io.stderr.write(`agentbus guard: ${verdict.reason}; allowing the commit\n`);
    return 0;
  }
  if (verdict.kind === 'allowed') return 0;
  const repository = repositoryLabel(verdict.hits[0]!.reservation.repository);
  io.stderr.write(refusalText(verdict.hits, committer, repository, now));
  return EXIT_CODES.refused;
}

export async function guardCommand(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  if (flagSet(flags, 'install')) {
    const config = configFlag(flags);
    const { path, updated } = installGuard(io.cwd, io.env, config === undefined ? undefined : resolve(io.cwd, config));
    io.stdout.write(
      `${updated ? 'updated' : 'installed'} ${path}: commits whose staged files another agent reserved exclusively are refused; \`git commit --no-verify\` skips the check\n`,
    );
    return 0;
  }
  try {
    return await check(io, flags);
  } catch (error) {
    // The guard must never be the reason a commit fails: whatever broke, say so and let it through.
    const what = error instanceof CliError ? error.message : `${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`;
    io.stderr.write(`agentbus guard: could not check file reservations (${what}); allowing the commit\n`);
    return 0;
  }
}
