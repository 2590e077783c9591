/**
 * V8's optimising compiler (TurboFan) held back while `agentbus mcp` starts.
 *
 * An idle server's resident memory is mostly what its start-up touched. A
 * start-up loop that runs long enough (Node's path handling over a long data
 * directory, sqlite-wasm reading its table of constants, a loop over SQL
 * text) makes V8 compile it with TurboFan on the spot, and the compiler's
 * own code, 3-7 MiB of the node binary, then stays paged in for the life of
 * a process that may do nothing else for hours. Start-up code runs once and
 * gains nothing from being optimised. So the compiler is off until the
 * first open of the database has settled, and on from then: code that turns
 * hot in a working server is optimised as before (V8 reads the flag at each
 * tier-up decision; test/mcp/start-up-compiler.test.ts holds that on every
 * Node the suite runs). The figures: docs/performance.md, issue 24's fifth round.
 */
import { setFlagsFromString } from 'node:v8';

/** The flags of a process whose owner chose how V8 compiles: left as they are. */
const CHOSEN_TIERING = /--(?:no-)?(?:turbofan|opt|jitless|lite-mode|max-opt|maglev|sparkplug)\b/;

export interface CompilerHold {
  /** True while the optimising compiler is off because of this hold. */
  readonly held: boolean;
  /** Turns the optimising compiler back on; the first call does, later ones do nothing. */
  release(): void;
}

export interface CompilerHoldOptions {
  /** The process's Node flags (process.execArgv). */
  readonly execArgv: readonly string[];
  /** NODE_OPTIONS of the process's environment. */
  readonly nodeOptions: string | undefined;
  /** Sets V8 flags at run time (node:v8's setFlagsFromString). */
  readonly setFlags?: (flags: string) => void;
}

/** Turns the optimising compiler off until release(), unless the process was started with its own choice of V8 tiers. */
export function holdOptimisingCompiler(options: CompilerHoldOptions): CompilerHold {
  const setFlags = options.setFlags ?? setFlagsFromString;
  const chosen = options.execArgv.some((flag) => CHOSEN_TIERING.test(flag)) || CHOSEN_TIERING.test(options.nodeOptions ?? '');
  let held = !chosen;
  if (held) setFlags('--no-turbofan');
  return {
    get held() {
      return held;
    },
    release() {
      if (!held) return;
      held = false;
      setFlags('--turbofan');
    },
  };
}
