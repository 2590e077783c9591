/**
 * Per-sender rate limits for mutations (send, edit_memory, delete_memory),
 * enforced in the process handling the call: two token buckets per sender,
 * `send_messages_per_second` operations and `send_kib_per_second` bytes, each
 * holding one second's worth (the byte bucket at least one maximum envelope,
 * so the largest allowed message always fits). State lives in the instance;
 * create one per server and pass it in through BusContext. Times are on the
 * monotonic clock: a wall clock set back would otherwise stop the refill.
 */
import type { Config } from '../config.js';
import { BusError } from './bus-error.js';

interface Buckets {
  /** Operations available now, 0..send_messages_per_second. */
  operations: number;
  /** Bytes available now, 0..byte burst. */
  bytes: number;
  /** When the buckets were last refilled, monotonic ms. */
  at: number;
}

// Prune idle senders past this many, so a long-lived server's map stays small.
const PRUNE_ABOVE = 1024;

export class RateLimiter {
  readonly #operationsPerSecond: number;
  readonly #bytesPerSecond: number;
  readonly #byteBurst: number;
  readonly #buckets = new Map<string, Buckets>();

  constructor(config: Pick<Config, 'send_messages_per_second' | 'send_kib_per_second' | 'max_message_kib'>) {
    this.#operationsPerSecond = config.send_messages_per_second;
    this.#bytesPerSecond = config.send_kib_per_second * 1024;
    this.#byteBurst = Math.max(this.#bytesPerSecond, config.max_message_kib * 1024);
  }

  #refill(sender: string, now: number): Buckets {
    let b = this.#buckets.get(sender);
    if (b === undefined) {
      if (this.#buckets.size >= PRUNE_ABOVE) this.#prune(now);
      b = { operations: this.#operationsPerSecond, bytes: this.#byteBurst, at: now };
      this.#buckets.set(sender, b);
      return b;
    }
    const elapsed = Math.max(0, now - b.at) / 1000;
    b.operations = Math.min(this.#operationsPerSecond, b.operations + elapsed * this.#operationsPerSecond);
    b.bytes = Math.min(this.#byteBurst, b.bytes + elapsed * this.#bytesPerSecond);
    b.at = now;
    return b;
  }

  #prune(now: number): void {
    for (const [sender, b] of this.#buckets) {
      if (now - b.at >= 1000 * Math.max(1, this.#byteBurst / this.#bytesPerSecond)) this.#buckets.delete(sender);
    }
  }

  /**
   * Charges one operation of `bytes` to `sender` at monotonic time `now` (ms), or
   * throws `rate_limited` (retryable) saying how long to wait; nothing is
   * charged then. Returns a refund for an operation that did not happen.
   */
  charge(sender: string, bytes: number, now: number): () => void {
    const b = this.#refill(sender, now);
    if (b.operations < 1 || b.bytes < bytes) {
      const waitOps = b.operations < 1 ? ((1 - b.operations) / this.#operationsPerSecond) * 1000 : 0;
      const waitBytes = b.bytes < bytes ? ((bytes - b.bytes) / this.#bytesPerSecond) * 1000 : 0;
      const waitMs = Math.ceil(Math.max(waitOps, waitBytes));
      throw new BusError(
        'rate_limited',
        `${sender} is over its rate limit (send_messages_per_second ${this.#operationsPerSecond}, send_kib_per_second ${this.#bytesPerSecond / 1024}); retry in about ${waitMs} ms`,
      );
    }
    b.operations -= 1;
    b.bytes -= bytes;
    let refunded = false;
    return () => {
      if (refunded) return;
      refunded = true;
      const current = this.#buckets.get(sender);
      if (current === undefined) return;
      current.operations = Math.min(this.#operationsPerSecond, current.operations + 1);
      current.bytes = Math.min(this.#byteBurst, current.bytes + bytes);
    };
  }
}
