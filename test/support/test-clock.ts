/**
 * The one clock tests drive by hand: it starts at a fixed instant and moves
 * only when a test moves it (ages are set by time, never by sleeping). Wall
 * and monotonic time move together with `advance`; `jump` moves the wall
 * clock alone, as NTP or a user setting the date does. Each instance is its
 * own monotonic domain unless given one, so two clocks never pretend their
 * readings compare.
 */
import type { Clock } from '../../src/clock.js';

/** The instant a TestClock starts at unless told otherwise. */
export const TEST_EPOCH = Date.UTC(2026, 10, 30, 12, 0, 0);

let instances = 0;

export class TestClock implements Clock {
  /** Wall time in ms since the Unix epoch. */
  ms: number;
  /** Monotonic time in ms; starts far from the wall time so the two are never confused. */
  mono = 5_000_000;
  readonly monotonicDomain: string | undefined;

  constructor(options: { readonly start?: number; readonly domain?: string | null } = {}) {
    this.ms = options.start ?? TEST_EPOCH;
    this.monotonicDomain = options.domain === null ? undefined : (options.domain ?? `test-clock-${++instances}`);
  }

  now(): number {
    return this.ms;
  }

  monotonic(): number {
    return this.mono;
  }

  /** Time passes: both clocks move by `ms`. */
  advance(ms: number): void {
    this.ms += ms;
    this.mono += ms;
  }

  /** Time passes until the wall clock reads `ms`. */
  set(ms: number): void {
    this.advance(ms - this.ms);
  }

  /** The wall clock is set by `ms` (either way); no time passes. */
  jump(ms: number): void {
    this.ms += ms;
  }
}
