/**
 * The inbox file half of the inbox monitor: it writes what a look found,
 * at once after a tool call (a hook runs right after it), otherwise at most
 * once per interval with the newest content last, never while a receive of
 * this process is in flight (its answer rewrites the file anyway), and only
 * when the content changed: a commit that changes nothing for this
 * process's names (another name's direct message) costs no write.
 */
import type { Clock } from '../clock.js';
import { removeInboxFile, writeInboxFile } from '../harness/inbox-file.js';
import { toInboxFile, type NameState } from './inbox-names.js';

export interface InboxWriterOptions {
  readonly clock: Clock;
  readonly dataDir: string;
  /** The file's name in the inbox folder. */
  readonly fileName: string;
  /** This process and its harness, as text. */
  readonly server: string;
  readonly harness: string;
  readonly writeIntervalMs: number;
  /** True while a receive of this process is in flight. */
  readonly receiving: () => boolean;
  /** Reports a failed write (rate-limited by the caller). */
  readonly onFailure: (message: string, error: unknown) => void;
}

export interface InboxWriter {
  /** Writes `names` now (when changed), superseding anything pending. Never throws. */
  writeNow(names: NameState[]): void;
  /** Writes `names` now if the last write is old enough and no receive is in flight, else after one interval at most, superseded by anything newer. */
  writeSoon(names: NameState[]): void;
  /** Drops anything pending and removes the file if this writer wrote it. Idempotent; never throws. */
  close(): void;
  /** How many times the file was written (the benchmark's cost figure). */
  readonly writes: number;
}

/**
 * Long because it is one closure over the writer's state (the text last
 * written, what is pending, when the last write was, the timer, closed, the
 * write count), which every method reads and writes.
 */
export function createInboxWriter(options: InboxWriterOptions): InboxWriter {
  const { clock, dataDir, fileName, writeIntervalMs } = options;
  let written: string | undefined;
  let pending: NameState[] | undefined;
  let lastWriteAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let writes = 0;

  const writeFile = (names: NameState[]): void => {
    if (names.length === 0) {
      if (written !== undefined) removeInboxFile(dataDir, fileName);
      written = undefined;
      return;
    }
    const file = toInboxFile(options.server, options.harness, names);
    const text = JSON.stringify(file);
    if (text === written) return;
    writeInboxFile(dataDir, fileName, file);
    written = text;
    writes++;
    lastWriteAt = clock.monotonic();
  };

  const writeNow = (names: NameState[]): void => {
    pending = undefined;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (closed) return;
    try {
      writeFile(names);
    } catch (error) {
      options.onFailure('writing the inbox file failed', error);
    }
  };

  return {
    writeNow,
    writeSoon(names) {
      const wait = options.receiving() ? writeIntervalMs : lastWriteAt + writeIntervalMs - clock.monotonic();
      if (wait <= 0) {
        writeNow(names);
        return;
      }
      pending = names;
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (pending !== undefined) writeNow(pending);
      }, wait);
      timer.unref();
    },
    close() {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      pending = undefined;
      if (written === undefined) return;
      written = undefined;
      try {
        removeInboxFile(dataDir, fileName);
      } catch (error) {
        options.onFailure('removing the inbox file failed', error);
      }
    },
    get writes() {
      return writes;
    },
  };
}
