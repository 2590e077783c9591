/**
 * The PostgreSQL connection URL (`database_url`, AGENTBUS_DATABASE_URL) and
 * its password: in the URL itself, else from the environment variable named
 * by `database_password_env`, else from `database_password_file`, whose mode
 * must keep it to this user (like ssh's keys). TLS goes through the URL's
 * own `sslmode` (and sslrootcert, sslcert, sslkey) parameters. No message
 * here or anywhere else shows the password: redact the URL first.
 */
import { readFileSync, statSync } from 'node:fs';
import { DbError } from '../contract/db-error.js';

const SCHEMES = ['postgres:', 'postgresql:'];

/** Why `url` is not a usable database_url, for the config's message (never echoing the URL, which may hold a password); undefined when it is. */
export function databaseUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL; write it as postgres://user@host:5432/database (percent-encode special characters in the user and password)';
  }
  if (!SCHEMES.includes(parsed.protocol)) {
    return `must be a postgres:// or postgresql:// URL, not ${parsed.protocol}//...; leave it unset to use the local SQLite file`;
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return 'names no server; write it as postgres://user@host:5432/database';
  if (parsed.pathname.length <= 1) return 'names no database; add it after the host: postgres://user@host:5432/database';
  return undefined;
}

/** The settings a connection's URL and password come from. */
export interface DatabasePasswordSettings {
  /** The URL as configured. */
  readonly database_url: string;
  /** The setting that gave it (`database_url`, AGENTBUS_DATABASE_URL), named in the refusal of a bad one. */
  readonly databaseUrlKey?: string;
  /** Absolute path of a file holding the password alone (one line). */
  readonly database_password_file?: string | undefined;
  /** Name of an environment variable holding the password. */
  readonly database_password_env?: string | undefined;
}

/**
 * The URL to connect with, the password filled in from the environment or
 * the file when the URL has none. Throws DbError `cantopen` for a malformed
 * URL (naming its setting, never echoing it), `permission` for a password
 * file this user cannot read or that others can.
 */
export function connectionUrl(settings: DatabasePasswordSettings, env: NodeJS.ProcessEnv = process.env): string {
  const problem = databaseUrlProblem(settings.database_url);
  if (problem !== undefined) throw new DbError('cantopen', `${settings.databaseUrlKey ?? 'database_url'} ${problem}`);
  const url = new URL(settings.database_url);
  if (url.password !== '') return url.toString();
  const password = passwordFromEnv(settings, env) ?? passwordFromFile(settings.database_password_file);
  if (password === undefined) return url.toString();
  url.password = encodeURIComponent(password);
  return url.toString();
}

function passwordFromEnv(settings: DatabasePasswordSettings, env: NodeJS.ProcessEnv): string | undefined {
  const name = settings.database_password_env;
  if (name === undefined) return undefined;
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function passwordFromFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  let mode: number;
  let text: string;
  try {
    mode = statSync(path).mode;
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new DbError('permission', `cannot read database_password_file ${path} (${(error as NodeJS.ErrnoException).code}): create it, or fix the path or its permissions`, { error });
  }
  if ((mode & 0o077) !== 0) {
    throw new DbError('permission', `database_password_file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): run \`chmod 600 ${path}\``);
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '' || password.includes('\n')) {
    throw new DbError('permission', `database_password_file ${path} must hold the password alone, on one line`);
  }
  return password;
}

/** `url` with any password taken out (the user part's, and a `password` parameter, which the client library honours too), for messages and reports; a malformed one (databaseUrlProblem) is never echoed. */
export function urlWithoutPassword(url: string): string {
  if (databaseUrlProblem(url) !== undefined) return '(a malformed URL)';
  const shown = new URL(url);
  shown.password = '';
  shown.searchParams.delete('password');
  return shown.toString();
}
