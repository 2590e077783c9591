/**
 * What a hook last told one harness session, so that it says each thing
 * once: a PostToolUse nudge repeats only when new messages arrived since,
 * and a Stop is blocked at most once for the same unread messages (an agent
 * that does not act on the reason is let go instead of looping). One small
 * file per session in `<dataDir>/inbox/hooks/`, named by a hash of the
 * session id the harness passes; state older than a week is removed by the
 * next `agentbus mcp` that starts.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inboxDir } from './inbox-file.js';

const HOOKS_DIR = 'hooks';
const KEEP_MS = 7 * 24 * 3_600_000;

export interface HookState {
  /** The unread signature the last nudge reported ('' when none). */
  readonly nudged: string;
  /** The signature (unread and unacknowledged) the last Stop block reported ('' when none). */
  readonly blocked: string;
}

const EMPTY: HookState = { nudged: '', blocked: '' };

// Two 32-bit FNV-1a hashes with different offsets: a short file name for any session id, without
// loading node:crypto, which costs a hook (run after every tool call) a tenth of a Node start. A
// collision only makes two sessions share what they were told.
function fnv1a(text: string, offset: number): string {
  let hash = offset;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

function statePath(dataDir: string, sessionId: string): string {
  const key = `${fnv1a(sessionId, 0x811c9dc5)}${fnv1a(sessionId, 0x1b873593)}`;
  return join(inboxDir(dataDir), HOOKS_DIR, `${key}.json`);
}

/** The state of `sessionId`; empty when there is none or it is unreadable. */
export function readHookState(dataDir: string, sessionId: string): HookState {
  try {
    const parsed = JSON.parse(readFileSync(statePath(dataDir, sessionId), 'utf8')) as Partial<Record<keyof HookState, unknown>>;
    return {
      nudged: typeof parsed.nudged === 'string' ? parsed.nudged : '',
      blocked: typeof parsed.blocked === 'string' ? parsed.blocked : '',
    };
  } catch {
    return EMPTY;
  }
}

/** Records the state of `sessionId` (written whole, renamed into place). */
export function writeHookState(dataDir: string, sessionId: string, state: HookState): void {
  const path = statePath(dataDir, sessionId);
  mkdirSync(join(inboxDir(dataDir), HOOKS_DIR), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(state), { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes session states untouched for a week. */
export function removeOldHookStates(dataDir: string, nowMs: number): void {
  const dir = join(inboxDir(dataDir), HOOKS_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      if (nowMs - statSync(path).mtimeMs > KEEP_MS) rmSync(path, { force: true });
    } catch {
      // Removed meanwhile.
    }
  }
}
