/**
 * Progress for long operations: one rewritten line on stderr while stdout is
 * a terminal, nothing at all when piped, so scripts see only results. The
 * line appears only once the operation has run PROGRESS_AFTER_MS (a quick
 * run shows nothing; AGENTBUS_PROGRESS_AFTER_MS changes it, 0 shows every
 * step at once): a timer shows the current step when the delay ends while
 * the work awaits (a stepped backup). A step that blocks the thread (one
 * long SQLite call: an integrity check, VACUUM INTO) cannot be shown by a
 * timer while it runs, so it is shown at once when it has BLOCKING_SHOWN_BYTES
 * or more to read (about a second's work on a small machine), or when the
 * delay has passed already.
 */
import type { CliIo } from './cli-io.js';

/** How long an operation runs before its progress shows. */
export const PROGRESS_AFTER_MS = 1000;
/** A blocking step reading this much is shown at once (an integrity check reads 60-200 MiB a second here). */
export const BLOCKING_SHOWN_BYTES = 64 * 2 ** 20;

export interface Progress {
  /** Says what is happening now, replacing the previous step; `fraction` (0-1) is how far it got. */
  step(text: string, fraction?: number): void;
  /** A step that blocks the thread until it ends, reading about `bytes`: shown at once when that is much (BLOCKING_SHOWN_BYTES). */
  blockingStep(text: string, bytes: number): void;
  /** Clears the progress line and stops its timer; call before printing the result. */
  done(): void;
}

/** The delay from AGENTBUS_PROGRESS_AFTER_MS when it is a whole number of milliseconds, else PROGRESS_AFTER_MS. */
function progressDelay(env: NodeJS.ProcessEnv): number {
  const raw = env.AGENTBUS_PROGRESS_AFTER_MS;
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : PROGRESS_AFTER_MS;
}

export function progressFor(io: CliIo): Progress {
  if (!io.isTty) return { step: () => undefined, blockingStep: () => undefined, done: () => undefined };
  const afterMs = progressDelay(io.env);
  const start = io.clock.monotonic();
  let current: string | undefined;
  let shown = false;
  const render = (): void => {
    if (current === undefined) return;
    io.stderr.write(`\r\x1b[K${current}`);
    shown = true;
  };
  let timer: NodeJS.Timeout | undefined = afterMs > 0 ? setTimeout(render, afterMs) : undefined;
  timer?.unref();
  return {
    step(text, fraction) {
      current = fraction === undefined ? text : `${text} ${Math.floor(Math.min(1, Math.max(0, fraction)) * 100)}%`;
      if (io.clock.monotonic() - start >= afterMs) render();
    },
    blockingStep(text, bytes) {
      current = text;
      if (bytes >= BLOCKING_SHOWN_BYTES || io.clock.monotonic() - start >= afterMs) render();
    },
    done() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (shown) io.stderr.write('\r\x1b[K');
      shown = false;
      current = undefined;
    },
  };
}
