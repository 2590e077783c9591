/**
 * doctor's `database_url` check on a bus on a PostgreSQL server: the URL is
 * one agentbus can connect with, and its password can be read (the password
 * file's mode included), judged by the same code `agentbus mcp` opens with
 * (src/db/open/postgres-url.ts), so it says what the server's start-up would.
 * The URL is shown without its password.
 */
import type { Config } from '../../../config.js';
import { connectionUrl, urlWithoutPassword } from '../../../db/open/postgres-url.js';
import { checkOfError, type Check } from './doctor-check.js';

/** The settings of a config whose bus is on a server. */
export type ServerConfig = Config & { readonly database_url: string };

export interface DatabaseUrlCheck {
  /** The `database_url` line. */
  readonly check: Check;
  /** The URL to connect with, password included; undefined when the check is a problem. */
  readonly connectWith: string | undefined;
}

/** Where the password comes from, in the order connectionUrl takes it. */
function passwordSource(config: ServerConfig, env: NodeJS.ProcessEnv): string {
  const url = new URL(config.database_url);
  if (url.password !== '' || url.searchParams.has('password')) return 'password in the URL';
  const name = config.database_password_env;
  if (name !== undefined && (env[name] ?? '') !== '') return `password from $${name}`;
  if (config.database_password_file !== undefined) return `password from ${config.database_password_file}`;
  return 'no password given';
}

export function checkDatabaseUrl(config: ServerConfig, env: NodeJS.ProcessEnv): DatabaseUrlCheck {
  let connectWith: string;
  try {
    connectWith = connectionUrl(config, env);
  } catch (error) {
    return { check: checkOfError('database_url', error), connectWith: undefined };
  }
  const message = `${urlWithoutPassword(config.database_url)} (from ${config.databaseUrlKey}; ${passwordSource(config, env)})`;
  return { check: { name: 'database_url', status: 'ok', message }, connectWith };
}
