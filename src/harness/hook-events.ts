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
 * - Cursor: its `stop` hook continues the agent with
 *   `{"followup_message"}` (from Cursor's documentation; no Cursor binary
 *   could be run here). Its other events cannot add context.
 * Printing nothing means "nothing to add" in all of them.
 */

export type HookKind = 'prompt' | 'tool' | 'stop';

interface EventSpec {
  /** prompt: the user's turn starts; tool: a tool call ended; stop: the agent wants to end its turn. */
  readonly kind: HookKind;
  /** How this harness is kept from stopping: decision block or deny with a reason, or a follow-up message. */
  readonly block: 'block' | 'deny' | 'followup';
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
  stop: { kind: 'stop', block: 'followup' },
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
  const block = EVENTS[event]?.block ?? 'block';
  return JSON.stringify(block === 'followup' ? { followup_message: reason } : { decision: block, reason });
}

/** The fields of a hook's stdin JSON this command reads; the rest is ignored. */
export interface HookInput {
  /** The event, e.g. PostToolUse or AfterAgent. */
  readonly event: string | undefined;
  /** The harness session (`session_id`, Cursor's `conversation_id`), for saying each thing once; undefined when absent. */
  readonly sessionId: string | undefined;
  /** True when this stop follows a stop hook's block (`stop_hook_active`; Cursor: `loop_count` above 0). */
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
        const session = [parsed.session_id, parsed.conversation_id].find((v) => typeof v === 'string' && v !== '') as string | undefined;
        return {
          event: typeof parsed.hook_event_name === 'string' ? parsed.hook_event_name : undefined,
          sessionId: session,
          stopHookActive: parsed.stop_hook_active === true || (typeof parsed.loop_count === 'number' && parsed.loop_count > 0),
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
    sessionId: field('session_id') ?? field('conversation_id'),
    stopHookActive: /"stop_hook_active"\s*:\s*true/.test(head) || /"loop_count"\s*:\s*[1-9]/.test(head),
  };
}
