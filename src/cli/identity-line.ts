/**
 * The install convention, outside the bus: a git-ignored
 * `.local/agentbus.json` found by walking up from the working directory holds
 * one field, `identity`. `agentbus identity` turns it into the one line a
 * SessionStart hook shows the model.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isBusError } from '../bus/bus-error.js';
import { checkName } from '../bus/names.js';
import { CliError } from './cli-error.js';

export const IDENTITY_FILE = join('.local', 'agentbus.json');
// The first call sequence after register: without a subscription nothing is delivered.
const NEXT_STEPS = 'then subscribe to general (chat) and memory (shared notes); send to post; receive to read, passing each batch_token as ack on the next receive';
const FALLBACK_NAME = 'agent';

/** The nearest `.local/agentbus.json` at or above `cwd`, if any. */
export function findIdentityFile(cwd: string): string | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, IDENTITY_FILE);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The repository directory holding `cwd` (nearest ancestor with `.git`), else `cwd` itself. */
function repositoryDir(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

function isValidName(name: string): boolean {
  try {
    checkName('identity', name);
    return true;
  } catch (error) {
    if (isBusError(error)) return false;
    throw error;
  }
}

/** Reads the identity file; throws CliError naming the file and the field when it is malformed. */
export function readIdentity(path: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError('failed', `${path} is not valid JSON (${(error as Error).message}); it should look like {"identity": "Sam"}`);
  }
  const identity = (parsed as { identity?: unknown } | null)?.identity;
  if (typeof identity !== 'string') {
    throw new CliError('failed', `${path}: "identity" must be a string, e.g. {"identity": "Sam"}`);
  }
  try {
    checkName('identity', identity);
  } catch (error) {
    if (isBusError(error)) throw new CliError('failed', `${path}: ${error.message}`);
    throw error;
  }
  const extra = Object.keys(parsed as object).filter((k) => k !== 'identity');
  if (extra.length > 0) throw new CliError('failed', `${path}: unknown field "${extra[0]}"; the file holds only "identity"`);
  return identity;
}

/** The one line for the SessionStart hook. */
export function identityLine(cwd: string): string {
  const file = findIdentityFile(cwd);
  if (file !== undefined) return `Agentbus: call register with name ${readIdentity(file)}, ${NEXT_STEPS}`;
  const suggestion = basename(repositoryDir(cwd));
  const name = isValidName(suggestion) ? suggestion : FALLBACK_NAME;
  return `Agentbus: call register with name ${name} (no ${IDENTITY_FILE} found: create one to choose the name), ${NEXT_STEPS}`;
}

/**
 * The line as SessionStart hook JSON (`hookSpecificOutput.additionalContext`):
 * Gemini CLI shows plain hook stdout to the user only, and passes this field to
 * the model; Claude Code reads it too.
 */
export function identityHookJson(cwd: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: identityLine(cwd) } });
}
