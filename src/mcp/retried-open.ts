/**
 * Opening the database again until it works, for a server that stays up
 * while its database cannot be opened (bus-process.ts). An attempt runs when
 * a caller asks and none ran in the last `minGapMs` (so a client calling in a
 * loop costs at most a few attempts a second), and on a slow unref'd timer
 * while failing, so a cause that ends by itself (the other Node's session
 * closed) is noticed without a call too. Callers during an attempt share it.
 * Once an attempt succeeds the timer stops and nothing is tried again.
 */

export interface RetriedOpenOptions<T> {
  /** One try; rejects with why it failed. */
  readonly attempt: () => Promise<T>;
  /** Told after each failed attempt; `changed` when its line differs from the previous failure's. */
  readonly failed: (error: unknown, changed: boolean) => void;
  /** Told once when an attempt succeeds after at least one failed. */
  readonly recovered: () => void;
  /** The shortest time between the end of a failed attempt and a caller's next one. */
  readonly minGapMs: number;
  /** How often the timer tries while failing. */
  readonly everyMs: number;
  /** A monotonic clock in ms. */
  readonly now: () => number;
}

export interface RetriedOpen<T> {
  /** The opened value; while failing, a new attempt (or the one running), or the last failure within `minGapMs` of it. */
  get(): Promise<T>;
  /** Starts the first attempt without waiting for it. */
  start(): void;
  /** True once an attempt succeeded. */
  readonly opened: boolean;
  /** True when no attempt has succeeded and at least one failed. */
  readonly failing: boolean;
  /** Stops trying, waits for an attempt still running; resolves with the opened value, if any. */
  stop(): Promise<T | undefined>;
}

/** A line to compare failures by: the same cause twice is told once. */
function lineOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The open, tried again until it works. Longer than most functions on purpose:
 * it is one closure over the retry state (the value, the attempt running, the
 * last failure and its line, when the last attempt ended, the timer, stopped),
 * which every method reads and the attempt writes; split, the pieces would
 * pass all seven around.
 */
export function retriedOpen<T>(options: RetriedOpenOptions<T>): RetriedOpen<T> {
  let value: { readonly v: T } | undefined;
  let running: Promise<T> | undefined;
  let lastError: unknown;
  let lastLine: string | undefined;
  let lastEnded = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const once = async (): Promise<T> => {
    try {
      const v = await options.attempt();
      value = { v };
      clearInterval(timer);
      if (lastLine !== undefined) options.recovered();
      return v;
    } catch (error) {
      const line = lineOf(error);
      lastError = error;
      options.failed(error, line !== lastLine);
      lastLine = line;
      if (timer === undefined && !stopped) {
        timer = setInterval(() => void (running === undefined && value === undefined && run().catch(() => undefined)), options.everyMs);
        timer.unref();
      }
      throw error;
    } finally {
      lastEnded = options.now();
    }
  };

  const run = (): Promise<T> => {
    const attempt = once();
    running = attempt;
    // Cleared after the attempt settles, whether it threw before its first await or later.
    attempt.then(
      () => (running = running === attempt ? undefined : running),
      () => (running = running === attempt ? undefined : running),
    );
    return attempt;
  };

  return {
    get() {
      if (value !== undefined) return Promise.resolve(value.v);
      if (running !== undefined) return running;
      if (stopped || options.now() - lastEnded < options.minGapMs) return Promise.reject(lastError);
      return run();
    },
    start() {
      if (running === undefined && value === undefined && !stopped) run().catch(() => undefined);
    },
    get opened() {
      return value !== undefined;
    },
    get failing() {
      return value === undefined && lastLine !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
      return value?.v;
    },
  };
}
