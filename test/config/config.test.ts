import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DRIVER_CHOICES } from '../../src/db/open/select-driver.js';
import { expectErrorSync } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';

function load(settings: unknown, env: NodeJS.ProcessEnv = {}, home = tempDir()) {
  const dir = tempDir();
  const path = join(dir, 'config.json');
  writeFileSync(path, typeof settings === 'string' ? settings : JSON.stringify(settings));
  return loadConfig({ configPath: path, env, homeDir: home, cwd: dir });
}

function problems(fn: () => unknown): { code: string; keys: string[]; error: ConfigError } {
  const error = expectErrorSync(fn, ConfigError);
  return { code: error.code, keys: error.problems.map((p) => p.key), error };
}

describe('configuration', () => {
  it('applies the design defaults when the default file is missing', () => {
    const home = tempDir();
    const config = loadConfig({ env: {}, homeDir: home, cwd: '/' });
    expect(config.configFileFound).toBe(false);
    expect(config.configPath).toBe(join(home, '.config/agentbus/config.json'));
    expect(config.data_directory).toBe(join(home, '.local/share/agentbus'));
    expect(config).toMatchObject({
      driver: 'auto',
      sqlite_budget_mib: 2048,
      message_retention_hours: 168,
      receive_default_count: 100,
      receive_max_wait_seconds: 60,
      inspection_command: [],
      log_level: 'info',
    });
  });

  it('resolves ~/ against home and relative paths against the config file, env overrides the file', () => {
    const home = tempDir();
    expect(load({ data_directory: '~/bus' }, {}, home).data_directory).toBe(join(home, 'bus'));
    const relative = load({ data_directory: 'data' });
    expect(relative.data_directory).toBe(join(relative.configPath, '..', 'data'));
    expect(load({ data_directory: '/x', driver: 'native' }, { AGENTBUS_DATA_DIR: '/y', AGENTBUS_DRIVER: 'wasm' })).toMatchObject({
      data_directory: '/y',
      driver: 'wasm',
    });
  });

  it('reads the file named by AGENTBUS_CONFIG, and --config wins over it', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'a/c.json'), '{"log_level":"debug"}');
    writeFileSync(join(dir, 'b/c.json'), '{"log_level":"warn"}');
    expect(loadConfig({ env: { AGENTBUS_CONFIG: join(dir, 'a/c.json') }, homeDir: dir, cwd: dir }).log_level).toBe('debug');
    expect(loadConfig({ configPath: 'b/c.json', env: { AGENTBUS_CONFIG: join(dir, 'a/c.json') }, homeDir: dir, cwd: dir }).log_level).toBe('warn');
  });

  it('refuses unknown keys, wrong types and out-of-range values, naming each key; never clamps', () => {
    const r = problems(() => load({ bogus: 1, sqlite_budget_mib: 10, receive_max_wait_seconds: 241, discovery_enabled: 'yes', cleanup_interval_seconds: 5.5 }));
    expect(r.code).toBe('config_invalid');
    expect(r.keys.sort()).toEqual(['bogus', 'cleanup_interval_seconds', 'discovery_enabled', 'receive_max_wait_seconds', 'sqlite_budget_mib']);
  });

  it('refuses invalid combinations', () => {
    expect(problems(() => load({ receive_default_count: 500, receive_max_count: 100 })).keys).toEqual(['receive_default_count']);
    expect(problems(() => load({ embedding_endpoint: 'http://127.0.0.1:1/v1/embeddings' })).keys).toEqual(['embedding_model']);
    expect(problems(() => load({ max_message_kib: 1024, send_kib_per_second: 512 })).keys).toEqual(['send_kib_per_second']);
    expect(problems(() => load({ embedding_api_key_file: 'missing-key' })).keys).toEqual(['embedding_api_key_file']);
    expect(problems(() => load({ embedding_endpoint: 'ftp://x/y', embedding_model: 'm' })).keys).toEqual(['embedding_endpoint']);
    expect(problems(() => load({ inspection_command: ['ok', ''] })).keys).toEqual(['inspection_command.1']);
  });

  it('rejects a misspelt driver name from the environment, listing the valid ones', () => {
    const r = problems(() => load({}, { AGENTBUS_DRIVER: 'natve' }));
    expect(r.keys).toEqual(['AGENTBUS_DRIVER']);
    for (const name of DRIVER_CHOICES) expect(r.error.message).toContain(name);
    expect(problems(() => load({ driver: 'sqlite' })).keys).toEqual(['driver']);
  });

  it('suggests the nearest setting or value for a near miss, and lists the settings otherwise', () => {
    const typo = problems(() => load({ drivr: 'wasm' }));
    expect(typo.keys).toEqual(['drivr']);
    expect(typo.error.message).toMatch(/drivr: is not a setting; did you mean "driver"\?/);
    expect(problems(() => load({ log_levle: 'info' })).error.message).toMatch(/did you mean "log_level"/);
    const unrelated = problems(() => load({ colour: 'blue' }));
    expect(unrelated.error.message).not.toMatch(/did you mean/);
    expect(unrelated.error.message).toMatch(/known settings: .*driver/);
    expect(problems(() => load({ driver: 'natve' })).error.message).toMatch(/driver: .*did you mean "native"\?/);
    expect(problems(() => load({}, { AGENTBUS_DRIVER: 'wsam' })).error.message).toMatch(/did you mean wasm\?/);
  });

  it('records where the driver choice came from: nothing, the file (with its path), or AGENTBUS_DRIVER', () => {
    const home = tempDir();
    expect(loadConfig({ env: {}, homeDir: home, cwd: '/' }).driverSource).toEqual({ kind: 'default' });
    const fromFile = load({ driver: 'native' });
    expect(fromFile).toMatchObject({ driver: 'native', driverSource: { kind: 'file', path: fromFile.configPath } });
    expect(load({ log_level: 'warn' }).driverSource).toEqual({ kind: 'default' });
    expect(load({ driver: 'native' }, { AGENTBUS_DRIVER: 'wasm' })).toMatchObject({ driver: 'wasm', driverSource: { kind: 'env' } });
  });

  it('says when the file is not JSON, or not readable when explicitly given', () => {
    expect(problems(() => load('{ "log_level": ')).code).toBe('config_unreadable');
    expect(problems(() => load('[1, 2]')).code).toBe('config_invalid');
    expect(problems(() => loadConfig({ configPath: '/nonexistent/agentbus.json', env: {}, homeDir: '/', cwd: '/' })).code).toBe(
      'config_unreadable',
    );
  });
});
