/**
 * Diagnostics go to a rotating file in the data directory (four 16 MiB files),
 * never to stdout (the MCP channel) or stderr (the harness's). Callers log an
 * operation and its identifiers; never payloads, never keys.
 */
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { Logger as TsLogger } from 'tslog';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  /** Detail for diagnosing a problem; off at the default level. */
  debug(message: string, fields?: LogFields): void;
  /** A normal event worth a line (start, stop, maintenance done). */
  info(message: string, fields?: LogFields): void;
  /** Something failed and was handled (retry later, fallback used). */
  warn(message: string, fields?: LogFields): void;
  /** Something failed and was not handled. */
  error(message: string, fields?: LogFields): void;
  /** Flushes and closes the sink. Idempotent. */
  close(): Promise<void>;
}

const LEVEL_IDS: Readonly<Record<LogLevel, number>> = { debug: 2, info: 3, warn: 4, error: 5 };

export const LOG_FILE = 'agentbus.log';

/** A logger writing JSON lines to `<dataDir>/agentbus.log`, rotated at 16 MiB, four files kept. */
export function createFileLogger(dataDir: string, level: LogLevel): Logger {
  const stream: RotatingFileStream = createStream(LOG_FILE, { path: dataDir, size: '16M', rotate: 3, mode: 0o600 });
  // A failing log file must never take the server down; the error is dropped on purpose.
  stream.on('error', () => undefined);
  const tslog = new TsLogger<LogFields>({
    type: 'hidden',
    minLevel: LEVEL_IDS[level],
    name: 'agentbus',
    stack: { capture: 'off' },
  });
  tslog.attachTransport({
    name: 'file',
    format: 'json',
    write: (_record, line) => {
      stream.write(`${line}\n`);
    },
  });
  let closed: Promise<void> | undefined;
  return {
    debug: (message, fields) => void tslog.debug(message, fields ?? {}),
    info: (message, fields) => void tslog.info(message, fields ?? {}),
    warn: (message, fields) => void tslog.warn(message, fields ?? {}),
    error: (message, fields) => void tslog.error(message, fields ?? {}),
    close: () => (closed ??= new Promise<void>((resolve) => stream.end(() => resolve()))),
  };
}

export interface LogEntry {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields;
}

/** A logger that keeps entries in memory, so tests can read what would have been logged. */
export function createMemoryLogger(level: LogLevel = 'debug'): Logger & { readonly entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (l: LogLevel) => (message: string, fields: LogFields = {}) => {
    if (LEVEL_IDS[l] >= LEVEL_IDS[level]) entries.push({ level: l, message, fields });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), close: async () => undefined };
}
