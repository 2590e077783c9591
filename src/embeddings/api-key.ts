/**
 * The embeddings API key: from the environment variable named by
 * `embedding_api_key_env` when it is set and non-empty, else from
 * `embedding_api_key_file`, else none (local servers need no key).
 * The key never appears in an error message or a log line.
 */
import { readFileSync } from 'node:fs';
import { EmbeddingError } from './embedding-error.js';

/** The settings the key comes from. */
export interface ApiKeySettings {
  /** Name of the environment variable holding the key; wins when set and non-empty. */
  readonly embedding_api_key_env?: string | undefined;
  /** Absolute path of the key file. */
  readonly embedding_api_key_file?: string | undefined;
}

const ASSIGNMENT = /^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(.*)$/;
const KEY_CHARS = /^[\x21-\x7e]+$/;

/**
 * Parses a key file: a bare key, or one line `export NAME='value'`,
 * `NAME="value"` or `NAME=value`. Blank lines and `#` comments are ignored.
 * Throws EmbeddingError kind `key` saying what is wrong with the shape (never the content).
 */
export function parseKeyFile(text: string, path = 'the key file'): string {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (lines.length === 0) throw keyError(`${path} is empty; put the API key in it, alone or as export NAME='key'`);
  if (lines.length > 1) {
    throw keyError(`${path} has ${lines.length} non-comment lines; it must hold one: the bare key, or export NAME='key'`);
  }
  const line = lines[0] as string;
  const assignment = ASSIGNMENT.exec(line);
  // A bare base64 key may end in '=' or '==': only `NAME=` followed by a value not starting with '=' is an assignment.
  const value = assignment !== null && !(assignment[2] ?? '').startsWith('=') ? unquote(assignment[2] ?? '', path) : line;
  if (value === '') throw keyError(`${path} assigns an empty value; put the API key after the '='`);
  if (!KEY_CHARS.test(value)) {
    throw keyError(
      `${path} does not hold a key of printable characters without spaces; write the bare key, or one line export NAME='key'`,
    );
  }
  return value;
}

function unquote(raw: string, path: string): string {
  const quote = raw[0];
  if (quote === "'" || quote === '"') {
    if (raw.length < 2 || raw[raw.length - 1] !== quote) {
      throw keyError(`${path} has an unterminated ${quote === "'" ? 'single' : 'double'} quote; close it at the end of the line`);
    }
    return raw.slice(1, -1);
  }
  return raw;
}

function keyError(message: string): EmbeddingError {
  return new EmbeddingError('key', message);
}

/**
 * The key to send, or undefined when none is configured. Reads the file on
 * every call, so a rotated key is picked up without a restart.
 * Throws EmbeddingError kind `key` when the file cannot be read or parsed.
 */
export function resolveApiKey(settings: ApiKeySettings, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const envName = settings.embedding_api_key_env;
  if (envName !== undefined) {
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim();
  }
  const file = settings.embedding_api_key_file;
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new EmbeddingError('key', `cannot read embedding_api_key_file ${file} (${code}); fix its path or permissions`);
  }
  return parseKeyFile(text, `embedding_api_key_file ${file}`);
}
