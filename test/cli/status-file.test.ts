/**
 * `agentbus status` before and beside the SQLite file: no file yet, the driver a new one would get,
 * a driver setting that cannot open it (on a server: test/postgres/cli-on-server.test.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileState } from '../../src/db/storage/file-header.js';
import { DRIVER_FOR_PROTOCOL } from '../../src/db/open/select-driver.js';
import { openTestDatabase, otherProtocol, tempDir, testDriver } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli } from './cli-process.js';

describe('agentbus status of a SQLite file', () => {
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
});
