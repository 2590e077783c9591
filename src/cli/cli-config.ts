/** The configuration every admin command reads: `--config`, else AGENTBUS_CONFIG, else the default path. */
import { loadConfig, type Config } from '../config.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** What every command's options hold: the `--config` value (CONFIG_OPTION, common-options.ts). */
export interface ConfigOption {
  /** The path given with --config, if any. */
  readonly config: string | undefined;
}

/** The `--config` flag's value; a bare `--config` with no path is a usage error. */
export function configFlag(options: ConfigOption): string | undefined {
  const value = options.config;
  if (value === undefined) return undefined;
  if (value === '') throw new CliError('usage', '--config needs a path, e.g. --config ~/.config/agentbus/config.json');
  return value;
}

/** Loads and validates the configuration; throws ConfigError (exit 1) or CliError. */
export function commandConfig(io: CliIo, options: ConfigOption): Config {
  return loadConfig({ configPath: configFlag(options), env: io.env, homeDir: io.homeDir, cwd: io.cwd });
}
