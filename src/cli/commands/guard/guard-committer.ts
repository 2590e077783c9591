/**
 * Who is committing, for `agentbus guard`: the display names whose
 * reservations are the committer's own and never refuse its commit.
 *
 * `committingAgent` is the one place that decides; it tries, in order:
 * 1. an explicit name: `--as <display name>` on the guard, else the
 *    AGENTBUS_AS environment variable (e.g. `AGENTBUS_AS=Sam2 git commit`);
 * 2. the harness session: the display names held by the `agentbus mcp`
 *    servers of the harness that runs this process (found through the
 *    process tree, as `agentbus inbox` finds them: src/harness/harness-names.ts);
 * 3. `.local/agentbus.json` above the working directory: its `identity`
 *    and the display names register derives from it (`Sam`, `Sam2`, ...).
 * A name owns the reservations of its line of descent (sameLineage): a
 * parent's cover its children's commits (`Sam/task` works under `Sam`'s
 * claims) and a child's are its parent's. With none of them the
 * committer is unknown (a person, or an agent nobody named), and every
 * live exclusive reservation counts.
 */
import { checkDisplayName, isCandidateOf, sameLineage } from '../../../bus/names.js';
import { CliError } from '../../cli-error.js';
import { findIdentityFile, readIdentity } from '../../identity-line.js';

/** The environment variable naming the committing agent's display name. */
export const COMMITTER_ENV = 'AGENTBUS_AS';

export interface Committer {
  /** Who and how we know, for messages, e.g. `Sam (from /repo/.local/agentbus.json)`. */
  readonly description: string;
  /** True when a reservation held by `displayName` belongs to the committer. */
  owns(displayName: string): boolean;
}

const topName = (displayName: string): string => displayName.split('/')[0] ?? displayName;

function exactNames(names: readonly string[], description: string): Committer {
  return {
    description,
    owns: (displayName) => names.some((n) => sameLineage(n, displayName)),
  };
}

/** Throws CliError `usage` when `value` of `source` cannot be a display name. */
function checkedDisplayName(source: string, value: string): string {
  try {
    checkDisplayName(source, value);
  } catch (error) {
    throw new CliError('usage', `${(error as Error).message}; give the display name register returned, e.g. ${COMMITTER_ENV}=Sam2`);
  }
  if (value === '') throw new CliError('usage', `${source} is empty; give the display name register returned, e.g. ${COMMITTER_ENV}=Sam2`);
  return value;
}

/**
 * The committing agent, or undefined when nothing says who it is.
 * `harnessNames` returns the display names of the harness session running
 * this process (empty when there is none). Throws CliError on a malformed
 * name or identity file.
 */
export function committingAgent(env: NodeJS.ProcessEnv, cwd: string, asFlag: string | undefined, harnessNames: () => readonly string[]): Committer | undefined {
  if (asFlag !== undefined) {
    const name = checkedDisplayName('--as', asFlag);
    return exactNames([name], `${name} (from --as)`);
  }
  const fromEnv = env[COMMITTER_ENV];
  if (fromEnv !== undefined) {
    const name = checkedDisplayName(COMMITTER_ENV, fromEnv);
    return exactNames([name], `${name} (from ${COMMITTER_ENV})`);
  }
  const harness = harnessNames();
  if (harness.length > 0) return exactNames(harness, `${harness.join(', ')} (this harness session)`);
  const file = findIdentityFile(cwd);
  if (file === undefined) return undefined;
  const identity = readIdentity(file);
  return {
    description: `${identity} (from ${file})`,
    // Every name register derives from the identity, and their whole lines of descent.
    owns: (displayName) => isCandidateOf(topName(displayName), identity, false),
  };
}
