/** Options and help text several commands share, declared once (the commands' spec.ts files use them). */
import type { OptionSpec } from './command-spec.js';

export const CONFIG_OPTION = {
  flag: '--config',
  kind: 'value',
  description: 'Path of the config file (default ~/.config/agentbus/config.json, or AGENTBUS_CONFIG)',
  value: 'a path, e.g. --config ~/.config/agentbus/config.json',
} as const satisfies OptionSpec;

/** Appended to every command's description: the exit codes scripts may rely on. */
export const EXIT_TEXT = 'Exit codes: 0 done, 1 failed, 2 usage error, 3 refused (nothing changed).';

export const JSON_LINES_OPTION = {
  flag: '--json',
  kind: 'boolean',
  description: 'Print one JSON object per message, one per line (the fields receive returns)',
} as const satisfies OptionSpec;

export const SINCE_OPTION = {
  flag: '--since',
  kind: 'value',
  description: 'Only messages from this time on: an age (30s, 10m, 2h, 1d) or an ISO date and time',
  value: 'an age or a date, e.g. --since 10m or --since 2026-11-30T12:00:00Z',
} as const satisfies OptionSpec;
