/**
 * database_url, AGENTBUS_DATABASE_URL and the password's sources
 * (src/config.ts, src/db/open/postgres-url.ts): a bad URL is refused when the bus
 * opens (a tool error, not an exiting server), naming the key and never
 * echoing the URL; the password comes from the URL, else the
 * named environment variable, else a file only its owner can read.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { connectionUrl, urlWithoutPassword } from '../../src/db/open/postgres-url.js';
import { expectErrorSync } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';

function load(file: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const dir = tempDir();
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(file));
  return loadConfig({ configPath: path, env, homeDir: dir, cwd: dir });
}

describe('database_url', () => {
  it('is unset by default: the SQLite file', () => {
    expect(load({}).database_url).toBeUndefined();
  });

  it('takes a postgres:// or postgresql:// URL, and AGENTBUS_DATABASE_URL overrides it', () => {
    expect(load({ database_url: 'postgres://a@db.example:5432/bus' }).database_url).toBe('postgres://a@db.example:5432/bus');
    expect(load({ database_url: 'postgres://a@one/bus' }, { AGENTBUS_DATABASE_URL: 'postgresql://b@two/bus?sslmode=verify-full' }).database_url).toBe(
      'postgresql://b@two/bus?sslmode=verify-full',
    );
  });

  it('a malformed URL, another scheme, or one without a host or database is refused at open as cantopen naming its setting, without echoing the URL', () => {
    const cases: [Record<string, unknown>, NodeJS.ProcessEnv, string][] = [
      [{ database_url: 'not a url:s3cret' }, {}, 'database_url'],
      [{ database_url: 'mysql://u:s3cret@h/db' }, {}, 'database_url'],
      [{ database_url: 'postgres://u:s3cret@h' }, {}, 'database_url'],
      [{}, { AGENTBUS_DATABASE_URL: 'http://u:s3cret@h/db' }, 'AGENTBUS_DATABASE_URL'],
    ];
    for (const [file, env, key] of cases) {
      const config = load(file, env);
      expect(config.databaseUrlKey).toBe(key);
      const error = expectErrorSync(() => connectionUrl({ ...config, database_url: config.database_url as string }, {}), DbError, 'cantopen');
      expect(error.message.startsWith(`${key} `)).toBe(true);
      expect(error.message).not.toContain('s3cret');
    }
  });
});

describe('the password', () => {
  it('comes from the URL first, then the named environment variable, then the password file', () => {
    const dir = tempDir();
    const file = join(dir, 'pw');
    writeFileSync(file, 'from file\n', { mode: 0o600 });
    const settings = { database_url: 'postgres://u@h/db', database_password_file: file, database_password_env: 'PW' };
    expect(new URL(connectionUrl({ ...settings, database_url: 'postgres://u:inurl@h/db' }, { PW: 'env' })).password).toBe('inurl');
    expect(decodeURIComponent(new URL(connectionUrl(settings, { PW: 'from env' })).password)).toBe('from env');
    expect(decodeURIComponent(new URL(connectionUrl(settings, {})).password)).toBe('from file');
    expect(new URL(connectionUrl({ database_url: 'postgres://u@h/db' }, {})).password).toBe('');
  });

  it('a password file others can read is refused (permission), saying chmod 600', () => {
    const dir = tempDir();
    const file = join(dir, 'pw');
    writeFileSync(file, 'secret\n');
    chmodSync(file, 0o644);
    const error = expectErrorSync(() => connectionUrl({ database_url: 'postgres://u@h/db', database_password_file: file }, {}), DbError, 'permission');
    expect(error.message).toContain('chmod 600');
    expect(error.message).not.toContain('secret');
  });

  it('the config resolves the password file relative to the config file', () => {
    const config = load({ database_url: 'postgres://u@h/db', database_password_file: 'pw' });
    expect(config.database_password_file).toBe(join(config.configPath, '..', 'pw'));
  });

  it('is shown without its password, whether in the user part or a password parameter, the other parameters kept', () => {
    expect(urlWithoutPassword('postgres://u:secret@h:5432/db?sslmode=require')).toBe('postgres://u@h:5432/db?sslmode=require');
    expect(urlWithoutPassword('postgres://u@h/db?password=secret&sslmode=require')).toBe('postgres://u@h/db?sslmode=require');
  });
});
