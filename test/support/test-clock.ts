/**
 * The one clock tests drive by hand: it starts at a fixed instant and moves
 * only when a test moves it (ages are set by time, never by sleeping). Wall
 * and monotonic time move together with `advance`; `jump` moves the wall
 * clock alone, as NTP or a user setting the date does. Each instance is its
 * own monotonic domain unless given one, so two clocks never pretend their
 * readings compare.
 */
import type { Clock } from '../../src/clock.js';

/**
 * The instant a TestClock starts at unless told otherwise: the whole second
 * this test file was loaded in, not a fixed date. Some state a test makes on
 * its clock is read by a real process on the system clock (a spawned server,
 * a hook command); with a fixed date that state aged with the calendar, and
 * tests began to fail once it passed one of the bus's ages (a subscription's
 * 72 hours on 2026-12-03; message retention's 168 hours would have come
 * next). Within a test file every clock still starts at the same instant.
 */
export const TEST_EPOCH = Math.floor(Date.now() / 1000) * 1000;

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
