/**
 * Running the inspection hook: the configured argv executed directly (no
 * shell), one JSON object on stdin, one JSON decision expected on stdout,
 * under a deadline and with capped output. Every way the hook can fail is
 * reported as a value, never thrown, so the caller decides what it means.
 */
import { spawn } from 'node:child_process';
import * as v from 'valibot';

/** The most the hook may write on stdout, and separately on stderr. */
export const HOOK_OUTPUT_CAP = 64 * 1024;

/** What the hook must print on stdout: exactly one of these, trailing whitespace allowed. */
export const HookDecisionSchema = v.object({
  decision: v.picklist(['allow', 'deny']),
  reason: v.optional(v.string()),
});

export type HookDecision = v.InferOutput<typeof HookDecisionSchema>;

/** Why the hook gave no usable decision. */
export type HookProblem =
  | 'spawn_failed'
  | 'timeout'
  | 'stdout_too_large'
  | 'stderr_too_large'
  | 'exit_code'
  | 'signal'
  | 'empty_output'
  | 'malformed_output';

export type HookOutcome =
  | { readonly kind: 'decision'; readonly decision: HookDecision }
  | { readonly kind: 'unavailable'; readonly problem: HookProblem; readonly detail: string };

interface Collected {
  chunks: Buffer[];
  bytes: number;
}

function killTree(pid: number | undefined, fallback: () => void): void {
  try {
    // The hook runs in its own process group, so whatever it started dies with it.
    if (pid !== undefined) process.kill(-pid, 'SIGKILL');
    else fallback();
  } catch {
    fallback();
  }
}

/** Runs `argv` with `input` on stdin; resolves with the decision or the problem. `argv` must be non-empty. */
export function runHook(argv: readonly string[], timeoutMs: number, input: string): Promise<HookOutcome> {
  const [file, ...args] = argv;
  if (file === undefined) throw new TypeError('runHook needs a non-empty argv');
  return new Promise<HookOutcome>((resolve) => {
    let settled: HookOutcome | undefined;
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, shell: false });
    const stop = (outcome: HookOutcome) => {
      settled ??= outcome;
      killTree(child.pid, () => child.kill('SIGKILL'));
    };
    const timer = setTimeout(
      () => stop({ kind: 'unavailable', problem: 'timeout', detail: `gave no decision within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    const out: Collected = { chunks: [], bytes: 0 };
    const err: Collected = { chunks: [], bytes: 0 };
    const collect = (into: Collected, problem: 'stdout_too_large' | 'stderr_too_large', name: string) => (chunk: Buffer) => {
      into.bytes += chunk.length;
      if (into.bytes > HOOK_OUTPUT_CAP) {
        stop({ kind: 'unavailable', problem, detail: `wrote more than ${HOOK_OUTPUT_CAP / 1024} KiB on ${name}` });
      } else {
        into.chunks.push(chunk);
      }
    };
    child.stdout.on('data', collect(out, 'stdout_too_large', 'stdout'));
    child.stderr.on('data', collect(err, 'stderr_too_large', 'stderr'));
    // A hook may exit without reading its input; the broken pipe is not the failure to report.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);

    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settled ??= {
        kind: 'unavailable',
        problem: 'spawn_failed',
        detail: `could not be started (${error.code ?? error.message}); check that inspection_command[0] is an executable path`,
      };
      resolve(settled);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (settled === undefined) settled = judge(code, signal, Buffer.concat(out.chunks).toString('utf8'));
      resolve(settled);
    });
  });
}

function judge(code: number | null, signal: NodeJS.Signals | null, stdout: string): HookOutcome {
  if (signal !== null) return { kind: 'unavailable', problem: 'signal', detail: `was killed by ${signal}` };
  if (code !== 0) return { kind: 'unavailable', problem: 'exit_code', detail: `exited with status ${code}` };
  if (stdout.trim() === '') return { kind: 'unavailable', problem: 'empty_output', detail: 'printed no decision' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { kind: 'unavailable', problem: 'malformed_output', detail: 'printed something other than one JSON object' };
  }
  const result = v.safeParse(HookDecisionSchema, parsed);
  if (!result.success) {
    return {
      kind: 'unavailable',
      problem: 'malformed_output',
      detail: 'printed JSON that is not {"decision": "allow" | "deny", "reason"?: string}',
    };
  }
  return { kind: 'decision', decision: result.output };
}
