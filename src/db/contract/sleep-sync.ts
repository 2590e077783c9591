/**
 * Blocks the thread without burning CPU. SQLite's engines are synchronous, so
 * a busy wait inside them must sleep synchronously; Atomics.wait on a private
 * SharedArrayBuffer does that on the main thread in Node.
 */
const cell = new Int32Array(new SharedArrayBuffer(4));

/** Sleeps for `ms` milliseconds (fractions allowed); returns at once for ms <= 0. */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(cell, 0, 0, ms);
}
