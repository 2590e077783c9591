/**
 * Who is committing, for `agentbus guard`: the display names whose
 * reservations are the committer's own and never refuse its commit.
 *
 * `committingAgent` is the one place that decides; it tries, in order:
 * 1. an explicit name: `--as <display name>` on the guard, else the
 *    AGENTBUS_AS environment variable (e.g. `AGENTBUS_AS=Sam2 git commit`);
 * 2. the harness session mapping: the display names of the harness that
 *    runs this process (`harnessDisplayNames`, to be provided by the push
 *    work, issue 16; until then it finds nothing);
 * 3. `.local/agentbus.json` above the working directory: its `identity`
 *    and the display names register derives from it (`Sam`, `Sam2`, ...).
 * Each name also owns the reservations of its children (`Sam/task`): a
 * subagent's work is committed by its parent. With none of them the
 * committer is unknown (a person, or an agent nobody named), and every
 * live exclusive reservation counts.
 */
import { checkDisplayName, isCandidateOf } from '../bus/names.js';
import { CliError } from './cli-error.js';
import { findIdentityFile, readIdentity } from './identity-line.js';

/** The environment variable naming the committing agent's display name. */
export const COMMITTER_ENV = 'AGENTBUS_AS';

export interface Committer {
  /** Who and how we know, for messages, e.g. `Sam (from /repo/.local/agentbus.json)`. */
  readonly description: string;
  /** True when a reservation held by `displayName` belongs to the committer. */
  owns(displayName: string): boolean;
}

/**
 * The display names of the harness session running this process, from the
 * harness session mapping; undefined when there is no mapping to ask.
 * The lead plugs issue 16's exported lookup in here.
 */
export function harnessDisplayNames(_env: NodeJS.ProcessEnv, _cwd: string): readonly string[] | undefined {
  return undefined;
}

const topName = (displayName: string): string => displayName.split('/')[0] ?? displayName;

function exactNames(names: readonly string[], description: string): Committer {
  return {
    description,
    owns: (displayName) => names.some((n) => displayName === n || displayName.startsWith(`${n}/`)),
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

/** The committing agent, or undefined when nothing says who it is. Throws CliError on a malformed name or identity file. */
export function committingAgent(env: NodeJS.ProcessEnv, cwd: string, asFlag: unknown): Committer | undefined {
  if (asFlag !== undefined) {
    if (typeof asFlag !== 'string') throw new CliError('usage', '--as needs a display name, e.g. --as Sam2');
    const name = checkedDisplayName('--as', asFlag);
    return exactNames([name], `${name} (from --as)`);
  }
  const fromEnv = env[COMMITTER_ENV];
  if (fromEnv !== undefined) {
    const name = checkedDisplayName(COMMITTER_ENV, fromEnv);
    return exactNames([name], `${name} (from ${COMMITTER_ENV})`);
  }
  const harness = harnessDisplayNames(env, cwd);
  if (harness !== undefined && harness.length > 0) return exactNames(harness, `${harness.join(', ')} (this harness session)`);
  const file = findIdentityFile(cwd);
  if (file === undefined) return undefined;
  const identity = readIdentity(file);
  return {
    description: `${identity} (from ${file})`,
    owns: (displayName) => isCandidateOf(topName(displayName), identity, false),
  };
}
