/**
 * Repeated warnings and errors, said once: a failure that every call meets
 * (a damaged database, a full disk) would otherwise write a line per call,
 * megabytes a minute under a client that retries. The first occurrence is
 * logged; identical ones (same level, message and fields) within the window
 * are counted, and the next one after the window carries `repeated`: how many
 * were left out since the last line.
 */
import { performance } from 'node:perf_hooks';
import type { LogFields, Logger } from './log.js';

export interface RepeatLimitOptions {
  /** How long an identical line stays quiet after it was written. Default 60 s. */
  readonly windowMs?: number;
  /** A monotonic clock in ms. Default performance.now. */
  readonly now?: () => number;
  /** How many distinct lines are remembered; the oldest is forgotten first. Default 256. */
  readonly maxKeys?: number;
}

interface Seen {
  at: number;
  suppressed: number;
}

/** `logger` with warn and error lines rate-limited per identical line; debug and info pass through. */
export function limitRepeats(logger: Logger, options: RepeatLimitOptions = {}): Logger {
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? (() => performance.now());
  const maxKeys = options.maxKeys ?? 256;
  const seen = new Map<string, Seen>();

  const limited =
    (level: 'warn' | 'error') =>
    (message: string, fields: LogFields = {}): void => {
      const key = `${level}\u0000${message}\u0000${JSON.stringify(fields)}`;
      const t = now();
      const last = seen.get(key);
      if (last !== undefined && t - last.at < windowMs) {
        last.suppressed++;
        return;
      }
      seen.delete(key);
      if (seen.size >= maxKeys) seen.delete(seen.keys().next().value as string);
      seen.set(key, { at: t, suppressed: 0 });
      logger[level](message, last !== undefined && last.suppressed > 0 ? { ...fields, repeated: last.suppressed } : fields);
    };

  return {
    debug: (message, fields) => logger.debug(message, fields),
    info: (message, fields) => logger.info(message, fields),
    warn: limited('warn'),
    error: limited('error'),
    close: () => logger.close(),
  };
}
