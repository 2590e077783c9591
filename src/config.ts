/**
 * Configuration: one JSON file, validated whole by a valibot schema, then
 * overridden by AGENTBUS_DATA_DIR and AGENTBUS_DRIVER. Unknown keys, wrong
 * types, out-of-range values and invalid combinations are refused with the
 * key and the correction; nothing is clamped.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import * as v from 'valibot';
import { DRIVER_CHOICES, type DriverChoice, type DriverChoiceSource } from './db/open/select-driver.js';
import { closestName } from './did-you-mean.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** `config_invalid` for a bad value, `config_unreadable` for a file that cannot be read or parsed. */
  readonly code: 'config_invalid' | 'config_unreadable';
  /** Each problem: the key (dotted path) and what to do. */
  readonly problems: readonly { readonly key: string; readonly message: string }[];

  constructor(
    code: 'config_invalid' | 'config_unreadable',
    source: string,
    problems: readonly { key: string; message: string }[],
  ) {
    super(`${source}: ${problems.map((p) => (p.key === '' ? p.message : `${p.key}: ${p.message}`)).join('; ')}`);
    this.code = code;
    this.problems = problems;
  }
}

const int = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    fallback,
  );

const nonEmpty = (what: string) => v.pipe(v.string(`must be a string (${what})`), v.minLength(1, `must not be empty (${what})`));

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The config file's schema: every key of docs/configuration.md's table. */
export const ConfigFileSchema = v.strictObject({
  data_directory: v.optional(nonEmpty('a directory path'), '~/.local/share/agentbus'),
  driver: v.optional(v.picklist(DRIVER_CHOICES, `must be one of ${DRIVER_CHOICES.join(', ')}`), 'auto'),
  sqlite_budget_mib: int(64, 1_048_576, 2048),
  message_retention_hours: int(1, 8760, 168),
  cleanup_free_percent: int(5, 90, 25),
  cleanup_interval_seconds: int(5, 3600, 60),
  cursor_idle_hours: int(1, 720, 72),
  tombstone_min_hours: int(72, 720, 72),
  receipt_retention_minutes: int(1, 1440, 60),
  max_message_kib: int(1, 1024, 64),
  send_messages_per_second: int(1, 10_000, 100),
  send_kib_per_second: int(64, 65_536, 1024),
  receive_default_count: int(1, 1000, 100),
  receive_max_count: int(1, 10_000, 1000),
  receive_max_wait_seconds: int(0, 240, 60),
  result_default_kib: int(1, 4096, 64),
  discovery_enabled: v.optional(v.boolean('must be true or false'), true),
  push: v.optional(v.boolean('must be true or false'), true),
  inspection_command: v.optional(
    v.pipe(
      v.array(nonEmpty('one argv entry'), 'must be an array of strings: the executable, then its literal arguments'),
      v.maxLength(64, 'must have at most 64 entries'),
      v.check((argv) => argv.reduce((n, a) => n + Buffer.byteLength(a), 0) <= 32 * 1024, 'must total at most 32 KiB'),
    ),
    [],
  ),
  inspection_timeout_seconds: v.optional(
    v.pipe(v.number('must be a number'), v.minValue(0.1, 'must be at least 0.1'), v.maxValue(60, 'must be at most 60')),
    5,
  ),
  embedding_endpoint: v.optional(
    v.pipe(
      v.string('must be a URL string'),
      v.url('must be a URL such as http://127.0.0.1:11434/v1/embeddings'),
      v.check((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
    ),
  ),
  embedding_model: v.optional(nonEmpty('the model name')),
  embedding_api_key_file: v.optional(nonEmpty('a file path')),
  embedding_api_key_env: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name such as OPENAI_API_KEY')),
  ),
  log_level: v.optional(v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`), 'info'),
  // A PostgreSQL server instead of the SQLite file (docs/drivers.md, "PostgreSQL"); checked below, never echoed.
  database_url: v.optional(nonEmpty('a postgres:// URL')),
  database_password_file: v.optional(nonEmpty('a file path')),
  database_password_env: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name such as AGENTBUS_DATABASE_PASSWORD')),
  ),
});

type FileConfig = v.InferOutput<typeof ConfigFileSchema>;

/** The validated configuration with paths resolved and environment overrides applied. */
export interface Config extends Omit<FileConfig, 'driver' | 'data_directory' | 'embedding_api_key_file' | 'database_url' | 'database_password_file'> {
  /** Absolute data directory. */
  readonly data_directory: string;
  /** The driver choice after AGENTBUS_DRIVER. */
  readonly driver: DriverChoice;
  /** Where `driver` came from (AGENTBUS_DRIVER, the file, or nothing), for messages that must name it. */
  readonly driverSource: DriverChoiceSource;
  /** Absolute path of the key file, when configured. */
  readonly embedding_api_key_file: string | undefined;
  /** The PostgreSQL URL after AGENTBUS_DATABASE_URL, as given (checked at open); undefined: the SQLite file in data_directory. */
  readonly database_url: string | undefined;
  /** Where database_url came from, for messages that must name it. */
  readonly databaseUrlKey: 'database_url' | 'AGENTBUS_DATABASE_URL';
  /** Absolute path of the database password file, when configured. */
  readonly database_password_file: string | undefined;
  /** The config file that was read, or would have been read. */
  readonly configPath: string;
  /** False when no file existed at the default path (defaults only). */
  readonly configFileFound: boolean;
}

export interface LoadConfigOptions {
  /** `--config` from the command line; wins over AGENTBUS_CONFIG. */
  readonly configPath?: string | undefined;
  /** The environment to read AGENTBUS_* from. */
  readonly env: NodeJS.ProcessEnv;
  /** The user's home directory, for `~/`. */
  readonly homeDir: string;
  /** The working directory, for relative paths given in the environment or on the command line. */
  readonly cwd: string;
}

function expandHome(path: string, homeDir: string): string {
  if (path === '~') return homeDir;
  return path.startsWith('~/') ? join(homeDir, path.slice(2)) : path;
}

function resolvePath(path: string, base: string, homeDir: string): string {
  const expanded = expandHome(path, homeDir);
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

function keyOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String(p.key)).join('.');
}

function unknownKeyMessage(issue: v.BaseIssue<unknown>): string | undefined {
  // strictObject reports an unknown key as an issue whose path ends at that key.
  if (issue.kind === 'schema' && issue.expected === 'never') {
    const known = Object.keys(ConfigFileSchema.entries);
    const suggestion = closestName(String(issue.path?.at(-1)?.key ?? ''), known);
    if (suggestion !== undefined) return `is not a setting; did you mean "${suggestion}"?`;
    return `is not a setting; remove it (known settings: ${known.join(', ')})`;
  }
  return undefined;
}

/** A picklist's own message, with the nearest allowed value when the given one is a near miss (`natve`). */
function picklistMessage(issue: v.BaseIssue<unknown>): string | undefined {
  if (issue.type !== 'picklist' || typeof issue.input !== 'string') return undefined;
  const options = [...(issue.expected ?? '').matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
  const suggestion = closestName(issue.input, options);
  return suggestion === undefined ? undefined : `${issue.message}; did you mean "${suggestion}"?`;
}

/**
 * database_url after AGENTBUS_DATABASE_URL, where it came from, and the
 * password file's absolute path. The URL's shape is checked when the bus
 * opens (postgres-url.ts, connectionUrl), not here: a bad URL is then a tool
 * error naming the key, as every other start-up failure of `agentbus mcp`,
 * instead of a server that exits before the model can hear why.
 */
function databaseSettings(
  file: FileConfig,
  env: NodeJS.ProcessEnv,
  configDir: string,
  homeDir: string,
): Pick<Config, 'database_url' | 'databaseUrlKey' | 'database_password_file'> {
  const fromEnv = env.AGENTBUS_DATABASE_URL;
  const fromEnvSet = fromEnv !== undefined && fromEnv !== '';
  const database_password_file =
    file.database_password_file === undefined ? undefined : resolvePath(file.database_password_file, configDir, homeDir);
  return {
    database_url: fromEnvSet ? fromEnv : file.database_url,
    databaseUrlKey: fromEnvSet ? 'AGENTBUS_DATABASE_URL' : 'database_url',
    database_password_file,
  };
}

/** One setting's problem, as ConfigError lists it. */
type Problem = { key: string; message: string };

/**
 * The configuration file's parsed JSON, or `{}` with found false when the
 * default path has no file (an explicit path must exist). Throws ConfigError.
 */
function readConfigFile(configPath: string, explicit: string | undefined, source: string): { raw: unknown; found: boolean } {
  try {
    const text = readFileSync(configPath, 'utf8');
    try {
      return { raw: JSON.parse(text), found: true };
    } catch (error) {
      throw new ConfigError('config_unreadable', source, [
        { key: '', message: `is not valid JSON (${(error as Error).message}); fix the syntax` },
      ]);
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && explicit === undefined) return { raw: {}, found: false };
    const how = explicit !== undefined ? 'given by --config or AGENTBUS_CONFIG' : 'at the default path';
    throw new ConfigError('config_unreadable', source, [
      { key: '', message: `cannot be read (${code}); it was ${how}: create it, fix its permissions, or point elsewhere` },
    ]);
  }
}

/** The file's settings checked against the schema, defaults filled in. Throws ConfigError. */
function parseConfigFile(raw: unknown, source: string): FileConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError('config_invalid', source, [{ key: '', message: 'must be a JSON object of settings' }]);
  }
  const parsed = v.safeParse(ConfigFileSchema, raw);
  if (!parsed.success) {
    throw new ConfigError(
      'config_invalid',
      source,
      parsed.issues.map((issue) => ({ key: keyOf(issue), message: unknownKeyMessage(issue) ?? picklistMessage(issue) ?? issue.message })),
    );
  }
  return parsed.output;
}

/** The rules between settings the schema cannot state one setting at a time. */
function crossSettingProblems(file: FileConfig): Problem[] {
  const problems: Problem[] = [];
  if (file.receive_default_count > file.receive_max_count) {
    problems.push({
      key: 'receive_default_count',
      message: `(${file.receive_default_count}) must not exceed receive_max_count (${file.receive_max_count}); lower it or raise receive_max_count`,
    });
  }
  if (file.embedding_endpoint !== undefined && file.embedding_model === undefined) {
    problems.push({ key: 'embedding_model', message: 'is required when embedding_endpoint is set; name the model to request' });
  }
  if (file.send_kib_per_second < file.max_message_kib) {
    problems.push({
      key: 'send_kib_per_second',
      message: `(${file.send_kib_per_second}) must be at least max_message_kib (${file.max_message_kib}) so one largest message fits the byte burst`,
    });
  }
  return problems;
}

/** embedding_api_key_file as an absolute path; a problem when it cannot be read. */
function embeddingKeyFile(file: FileConfig, configDir: string, homeDir: string, problems: Problem[]): string | undefined {
  if (file.embedding_api_key_file === undefined) return undefined;
  const keyFile = resolvePath(file.embedding_api_key_file, configDir, homeDir);
  try {
    accessSync(keyFile, constants.R_OK);
  } catch {
    problems.push({ key: 'embedding_api_key_file', message: `${keyFile} is not a readable file; create it or fix the path` });
  }
  return keyFile;
}

/** The driver asked for, AGENTBUS_DRIVER over the file, and where the choice came from; a problem when the variable names no driver. */
function driverChoice(
  file: FileConfig,
  raw: unknown,
  configPath: string,
  env: NodeJS.ProcessEnv,
  problems: Problem[],
): { driver: DriverChoice; driverSource: DriverChoiceSource } {
  const fromFile: DriverChoiceSource = (raw as Record<string, unknown>).driver === undefined ? { kind: 'default' } : { kind: 'file', path: configPath };
  const envDriver = env.AGENTBUS_DRIVER;
  if (envDriver === undefined || envDriver === '') return { driver: file.driver, driverSource: fromFile };
  if ((DRIVER_CHOICES as readonly string[]).includes(envDriver)) return { driver: envDriver as DriverChoice, driverSource: { kind: 'env' } };
  const suggestion = closestName(envDriver, DRIVER_CHOICES);
  problems.push({
    key: 'AGENTBUS_DRIVER',
    message: `"${envDriver}" names no driver; ${suggestion === undefined ? '' : `did you mean ${suggestion}? `}use one of ${DRIVER_CHOICES.join(', ')}`,
  });
  return { driver: file.driver, driverSource: fromFile };
}

/** Reads, validates and resolves the configuration. Throws ConfigError. */
export function loadConfig(options: LoadConfigOptions): Config {
  const { env, homeDir, cwd } = options;
  const explicit = options.configPath ?? (env.AGENTBUS_CONFIG || undefined);
  const configPath = explicit !== undefined ? resolvePath(explicit, cwd, homeDir) : join(homeDir, '.config', 'agentbus', 'config.json');
  const source = `config ${configPath}`;

  const { raw, found: configFileFound } = readConfigFile(configPath, explicit, source);
  const file = parseConfigFile(raw, source);
  const configDir = resolve(configPath, '..');
  const problems = crossSettingProblems(file);
  const keyFile = embeddingKeyFile(file, configDir, homeDir, problems);
  const { driver, driverSource } = driverChoice(file, raw, configPath, env, problems);
  const database = databaseSettings(file, env, configDir, homeDir);
  if (problems.length > 0) throw new ConfigError('config_invalid', source, problems);

  const envDataDir = env.AGENTBUS_DATA_DIR;
  const data_directory =
    envDataDir !== undefined && envDataDir !== ''
      ? resolvePath(envDataDir, cwd, homeDir)
      : resolvePath(file.data_directory, configDir, homeDir);

  return { ...file, data_directory, driver, driverSource, embedding_api_key_file: keyFile, ...database, configPath, configFileFound };
}
