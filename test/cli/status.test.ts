import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileState } from '../../src/db/storage/file-header.js';
import { DRIVER_FOR_PROTOCOL } from '../../src/db/open/select-driver.js';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, otherProtocol, tempDir, testDriver, testDriverName } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli } from './cli-process.js';

describe('agentbus status', () => {
  it('reports a missing database without creating it', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const run = await runCli(dir, ['status', '--json']);
    expect(run.code).toBe(0);
    const report = jsonOf(run);
    expect(report.database).toMatchObject({ path: join(dir, 'agentbus.db'), exists: false, driver: null });
    expect(report.config_path).toBe(join(dir, 'config.json'));
    expect(report.config_file_found).toBe(true);
    expect(existsSync(join(dir, 'agentbus.db'))).toBe(false);
    const text = await runCli(dir, ['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/none yet/);
  });

  it('on a fresh install says which driver and lock protocol a new database would get, and why', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const report = jsonOf(await runCli(dir, ['status', '--json']));
    const driver = await testDriver();
    // AGENTBUS_DRIVER names this project's driver: that is the reason given.
    expect(report.new_database).toEqual({
      driver: driver.capabilities.name,
      lock_protocol: driver.capabilities.lockProtocol,
      why: `AGENTBUS_DRIVER=${driver.capabilities.name} asks for it`,
    });
    const auto = jsonOf(await runCli(dir, ['status', '--json'], { env: { AGENTBUS_DRIVER: '' } }));
    expect(auto.new_database.why).toMatch(/^auto: /);
    expect(['native', 'wasm']).toContain(auto.new_database.driver);
    const text = await runCli(dir, ['status'], { env: { AGENTBUS_DRIVER: '' } });
    expect(text.stdout).toMatch(new RegExp(`driver +a new database would get ${auto.new_database.driver} \\(lock protocol ${auto.new_database.lock_protocol}\\): auto: `));
    expect(existsSync(join(dir, 'agentbus.db'))).toBe(false);
  });

  it('names the config file and key, not AGENTBUS_DRIVER, when the file\'s driver setting cannot open the database', async () => {
    const dir = tempDir();
    const mine = (await testDriver()).capabilities.lockProtocol;
    (await openTestDatabase(dir)).db.close();
    const other = DRIVER_FOR_PROTOCOL[otherProtocol(mine)];
    const configPath = prepareCliDir(dir, { config: { driver: other } });
    const run = await runCli(dir, ['status'], { env: { AGENTBUS_DRIVER: '' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`"driver": "${other}" in ${configPath}`);
    expect(run.stderr).not.toContain('AGENTBUS_DRIVER');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    // The same setting from the environment is named as such.
    const fromEnv = await runCli(dir, ['status'], { env: { AGENTBUS_DRIVER: other } });
    expect(fromEnv.stderr).toContain(`AGENTBUS_DRIVER=${other}`);
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: mine });
  });

  it('shows live sessions, channels, usage against the budget, driver and protocol, as JSON and as text', async () => {
    const dir = tempDir();
    const server = await startMcp(dir, { config: { sqlite_budget_mib: 64 } });
    await server.call('register', { name: 'Alice' });
    await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    await server.call('subscribe', { as: 'Alice', channel: 'work' });
    await server.call('send', { as: 'Alice', channel: 'work', content: 'hello' });

    const run = await runCli(dir, ['status', '--json']);
    expect(run.code).toBe(0);
    const report = jsonOf(run);
    expect(report.data_directory).toBe(dir);
    expect(report.database).toMatchObject({
      exists: true,
      driver: testDriverName(),
      lock_protocol: testDriverName() === 'native' ? 'posix' : 'portable',
      schema_version: expect.any(Number),
    });
    expect(report.sessions.map((s: any) => s.display_name)).toEqual(['Alice']);
    expect(report.channels).toContainEqual({ name: 'work', kind: 'ordinary', messages: 1, subscribers: 1 });
    expect(report.usage.budget_bytes).toBe(64 * 1024 * 1024);
    expect(report.usage.used_bytes).toBeGreaterThan(0);
    expect(report.usage.percent).toBeCloseTo((report.usage.used_bytes / report.usage.budget_bytes) * 100, 0);
    expect(report.notices).toEqual([]);
    expect(report.embeddings).toEqual({ enabled: false, model: null, backlog: null });

    const text = await runCli(dir, ['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/usage +\[[#-]{20}\] [\d.]+%/);
    expect(text.stdout).toMatch(/sessions +1 live/);
    expect(text.stdout).toMatch(/Alice/);
    expect(text.stdout).toMatch(/work +ordinary +1 message/);
    expect(text.stderr).toBe('');
  });

  it('shows the embedding backlog when an endpoint is configured', async () => {
    const dir = tempDir();
    const server = await startMcp(dir, { config: { embedding_endpoint: 'http://127.0.0.1:9/v1/embeddings', embedding_model: 'm1' } });
    await server.call('register', { name: 'Alice' });
    const run = await runCli(dir, ['status', '--json']);
    expect(run.code).toBe(0);
    expect(jsonOf(run).embeddings).toEqual({ enabled: true, model: 'm1', backlog: 0 });
  });

  it('fails with exit 1 and names the key on a bad config value', async () => {
    const dir = tempDir();
    prepareCliDir(dir, { config: { sqlite_budget_mib: 1 } });
    const run = await runCli(dir, ['status']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/sqlite_budget_mib/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
