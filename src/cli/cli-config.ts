/** The configuration every admin command reads: `--config`, else AGENTBUS_CONFIG, else the default path. */
import { loadConfig, type Config } from '../config.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** The `--config` flag's value; a bare `--config` with no path is a usage error. */
export function configFlag(flags: Record<string, unknown>): string | undefined {
  const value = flags.config;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new CliError('usage', '--config needs a path, e.g. --config ~/.config/agentbus/config.json');
  }
  return value;
}

/** Loads and validates the configuration; throws ConfigError (exit 1) or CliError. */
export function commandConfig(io: CliIo, flags: Record<string, unknown>): Config {
  return loadConfig({ configPath: configFlag(flags), env: io.env, homeDir: io.homeDir, cwd: io.cwd });
}

/** True when a boolean flag was given (`--json`, `--yes`, ...). */
export function flagSet(flags: Record<string, unknown>, name: string): boolean {
  return flags[name] === true;
}
