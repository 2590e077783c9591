/** The `--since` value of the console commands: an ISO date and time, or an age such as `10m`. */
import { CliError } from './cli-error.js';

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds since the epoch for `--since`; `now` anchors an age. Throws a usage CliError naming the fix. */
export function parseSince(value: string, now: number): number {
  const age = /^(\d{1,9})([smhd])$/.exec(value);
  if (age !== null) return now - Number(age[1]) * (UNITS[age[2] as string] as number);
  // Only full dates: Date.parse alone would take "3" or "May" and mean something else.
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new CliError('usage', `--since "${value}" is neither an age nor a date; use e.g. --since 10m, --since 2h, --since 1d or --since 2026-11-30T12:00:00Z`);
}
