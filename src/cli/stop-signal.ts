/**
 * When a following command (tail, web) should stop: Ctrl-C, SIGTERM, or the
 * reader of stdout going away (`agentbus tail | head`). Installed by the
 * entry, not the command, so tests drive the command with their own signal.
 */
import type { Writable } from 'node:stream';

/** An AbortSignal that aborts on SIGINT, SIGTERM or an error on `stdout` (EPIPE); `dispose` removes the handlers. */
export function stopSignal(stdout: Writable): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  stdout.on('error', stop);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      stdout.off('error', stop);
    },
  };
}
