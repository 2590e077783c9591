/**
 * Progress for long operations: one rewritten line on stderr while stdout is
 * a terminal, nothing at all when piped, so scripts see only results.
 */
import type { CliIo } from './cli-io.js';

export interface Progress {
  /** Shows what is happening now, replacing the previous step. */
  step(text: string): void;
  /** Clears the progress line; call before printing the result. */
  done(): void;
}

export function progressFor(io: CliIo): Progress {
  if (!io.isTty) return { step: () => undefined, done: () => undefined };
  let shown = false;
  return {
    step(text) {
      io.stderr.write(`\r\x1b[K${text}`);
      shown = true;
    },
    done() {
      if (shown) io.stderr.write('\r\x1b[K');
      shown = false;
    },
  };
}
