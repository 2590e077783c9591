/**
 * A logger whose file comes later: `agentbus mcp` has no log file while its
 * data directory cannot be used (another user's, read-only, a dangling
 * symlink), and creating one there first could create the directory where
 * it must not be. Lines before attach() are dropped; stderr still gets the
 * reason (bus-process.ts).
 */
import type { LogFields, Logger } from './log.js';

export interface LateLogger extends Logger {
  /** True once attach() gave it a logger to write to. */
  readonly attached: boolean;
  /** Writes every later line to `target`; once. */
  attach(target: Logger): void;
}

export function createLateLogger(): LateLogger {
  let target: Logger | undefined;
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, fields?: LogFields): void =>
      target?.[level](message, fields);
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    get attached() {
      return target !== undefined;
    },
    attach(logger) {
      target ??= logger;
    },
    close: async () => target?.close(),
  };
}
