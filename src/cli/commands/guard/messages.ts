/** What `agentbus guard` writes on stderr: the refusal with its hits and advice, and the warnings that let a commit or push through. */
import { remaining } from '../../format.js';
import type { GuardHit } from './guard-check.js';
import { COMMITTER_ENV, type Committer } from './guard-committer.js';

/** What is being checked, for messages. */
export interface Checked {
  /** `commit` or `push`. */
  readonly what: string;
  /** How it touches the files: `it touches` / `its commits change`. */
  readonly touches: string;
}

export const COMMIT: Checked = { what: 'commit', touches: 'it touches' };
export const PUSH: Checked = { what: 'push', touches: 'its commits change' };

/** Hits listed in a refusal; the rest are counted. */
const HITS_SHOWN = 20;

function describeHit(hit: GuardHit, now: number): string {
  const r = hit.reservation;
  const why = r.reason === null ? '' : `: ${r.reason}`;
  return `  ${hit.path}  reserved by ${r.holder} ("${r.pattern}", exclusive, expires ${new Date(r.expires_at).toISOString()}, ${remaining(now, r.expires_at)})${why}`;
}

export function refusalText(checked: Checked, hits: readonly GuardHit[], committer: Committer | undefined, repository: string, now: number): string {
  const holders = [...new Set(hits.map((h) => h.reservation.holder))];
  const lines = [
    `agentbus guard: ${checked.what} refused: ${checked.touches} files ${holders.join(', ')} reserved exclusively in ${repository}:`,
    ...hits.slice(0, HITS_SHOWN).map((h) => describeHit(h, now)),
  ];
  if (hits.length > HITS_SHOWN) lines.push(`  ... and ${hits.length - HITS_SHOWN} more`);
  lines.push(
    committer === undefined
      ? `The committer is not known (no --as, ${COMMITTER_ENV}, agentbus server of this harness session, or .local/agentbus.json), so every agent's exclusive reservation counts; if you hold these, ${checked.what} with ${COMMITTER_ENV}=<your display name>.`
      : `Committing as ${committer.description}.`,
    `Ask ${holders.join(', ')} to release (an agentbus message away), wait until the reservation ends, ${checked === PUSH ? 'push other commits' : 'unstage those files'}, or ${checked.what} anyway with \`git ${checked.what} --no-verify\`.`,
  );
  return `${lines.join('\n')}\n`;
}

/** A problem of agentbus's own: warned about, and the commit or push goes through. */
export const allowing = (problem: string, what: string): string => `agentbus guard: ${problem}; allowing the ${what}\n`;

/** The Node the check was handed to did not finish it. */
export const handOverFailed = (node: string, exit: number | string | null, what: string): string =>
  `agentbus guard: ${node} ran the check and exited ${String(exit)}; allowing the ${what}\n`;

/** --install from a Node that cannot read the bus: the hooks run another one. */
export const hooksRunOther = (version: string, protocol: string, other: string): string =>
  `agentbus guard: this Node (${version}) cannot read the ${protocol} bus; the hooks run ${other}, which can\n`;
