/**
 * The hook events `agentbus inbox --hook` answers, and each harness's output
 * format for them (read from the harnesses' documentation and checked in
 * their binaries by test/harnesses/):
 * - Claude Code and Codex: UserPromptSubmit, PostToolUse (and Claude's
 *   PostToolUseFailure) add `hookSpecificOutput.additionalContext`; Stop
 *   (and SubagentStop) blocks with `{"decision": "block", "reason"}`, the
 *   reason going to the model.
 * - Gemini CLI: BeforeAgent and AfterTool add
 *   `hookSpecificOutput.additionalContext`; AfterAgent retries the turn with
 *   `{"decision": "deny", "reason"}`, the reason as the next prompt. Plain
 *   stdout is not shown to a Gemini model, so JSON is the only way in.
 * Printing nothing means "nothing to add" in all three.
 */

export type HookKind = 'prompt' | 'tool' | 'stop';

interface EventSpec {
  /** prompt: the user's turn starts; tool: a tool call ended; stop: the agent wants to end its turn. */
  readonly kind: HookKind;
  /** The word that blocks a stop in this harness. */
  readonly block: 'block' | 'deny';
}

const EVENTS: Readonly<Record<string, EventSpec>> = {
  UserPromptSubmit: { kind: 'prompt', block: 'block' },
  PostToolUse: { kind: 'tool', block: 'block' },
  PostToolUseFailure: { kind: 'tool', block: 'block' },
  Stop: { kind: 'stop', block: 'block' },
  SubagentStop: { kind: 'stop', block: 'block' },
  BeforeAgent: { kind: 'prompt', block: 'deny' },
  AfterTool: { kind: 'tool', block: 'deny' },
  AfterAgent: { kind: 'stop', block: 'deny' },
};

/** The events `--hook` understands. */
export const HOOK_EVENTS: readonly string[] = Object.keys(EVENTS);

/** What kind of moment `event` is, or undefined for an event this command does not answer. */
export function hookKind(event: string): HookKind | undefined {
  return Object.hasOwn(EVENTS, event) ? EVENTS[event]!.kind : undefined;
}

/** The JSON line that adds `text` to the model's context at `event` (a prompt or tool event). */
export function contextOutput(event: string, text: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });
}

/** The JSON line that keeps the agent from stopping at `event`, telling it `reason`. */
export function stopOutput(event: string, reason: string): string {
  return JSON.stringify({ decision: EVENTS[event]?.block ?? 'block', reason });
}

/** The fields of a hook's stdin JSON this command reads; the rest is ignored. */
export interface HookInput {
  /** The event, e.g. PostToolUse or AfterAgent. */
  readonly event: string | undefined;
  /** The harness session, for saying each thing once; undefined when absent or not a string. */
  readonly sessionId: string | undefined;
  /** True when this stop follows a stop hook's block (Claude Code, Codex, Gemini all send it). */
  readonly stopHookActive: boolean;
}

const HEAD_BYTES = 65_536;

/**
 * Reads the fields from a hook's stdin text. A very large input (a tool
 * response of megabytes) is not parsed whole: the fields sit at its start.
 */
export function parseHookInput(text: string, complete: boolean): HookInput {
  if (complete) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown> | null;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return {
          event: typeof parsed.hook_event_name === 'string' ? parsed.hook_event_name : undefined,
          sessionId: typeof parsed.session_id === 'string' && parsed.session_id !== '' ? parsed.session_id : undefined,
          stopHookActive: parsed.stop_hook_active === true,
        };
      }
    } catch {
      // Fall through to the scan of the head.
    }
  }
  const head = text.slice(0, HEAD_BYTES);
  const field = (name: string): string | undefined => new RegExp(`"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.){1,256})"`).exec(head)?.[1];
  return {
    event: field('hook_event_name'),
    sessionId: field('session_id'),
    stopHookActive: /"stop_hook_active"\s*:\s*true/.test(head),
  };
}
