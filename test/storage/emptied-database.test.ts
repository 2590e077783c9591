/**
 * The emptied database: agentbus.db truncated to 0 bytes (or left without
 * its schema) in a data directory that shows a bus was used there, with no
 * backup to point at. A server, `status` and `doctor` refuse to start a new
 * bus over it silently and say what to do; `agentbus reset` starts empty on
 * purpose, after which a server works. A first start stays silent.
 */
import { existsSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RegisterOutput } from '../../src/bus/identity.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { jsonOf, runCli, waitForPidExit } from '../cli/cli-process.js';
import { doctorCheck } from '../support/doctor-report.js';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';
import { usedBus } from '../support/used-bus.js';

/** A bus a server used (its log says so), no backups, every server stopped. */
async function usedBusWithoutBackups(dir: string): Promise<void> {
  await usedBus(dir, { message: true });
  expect(existsSync(join(dir, 'backups'))).toBe(false);
}

/** The refusal every entry point gives, and reset's way out, after which a new bus works. */
async function refusedThenReset(dir: string, doctorFinding: string): Promise<void> {
  const server = await startMcp(dir);
  const refused = toolAnswer(ToolError, await server.call('register', { name: 'Bob' }), 'register').error;
  expect(refused).toMatchObject({ code: 'database_corrupt', retryable: false });
  expect(refused.message).toContain('agentbus reset');
  expect(toolAnswer(ToolError, await server.call('discover', {}), 'discover').error.code).toBe('database_corrupt');

  const status = await runCli(dir, ['status']);
  expect(status.code).toBe(1);
  expect(status.stderr).toContain('agentbus reset');
  const doctor = await runCli(dir, ['doctor', '--json']);
  expect(doctor.code).toBe(1);
  expect(doctorCheck(jsonOf(doctor), doctorFinding)).toMatchObject({ status: 'problem', message: expect.stringContaining('agentbus reset') });

  // Without a terminal reset wants --yes, as for a wipe; with it, a new empty bus.
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
  expect((await runCli(dir, ['reset'])).code).toBe(3);
  const reset = await runCli(dir, ['reset', '--yes']);
  expect(reset.code, reset.stderr).toBe(0);
  const fresh = await startMcp(dir);
  const me = toolAnswer(RegisterOutput, await fresh.call('register', { name: 'Bob' }), 'register');
  expect(me.display_name).toBe('Bob');
  expect((await runCli(dir, ['status'])).code).toBe(0);
}

describe('an emptied database where a bus was, without backups', () => {
  it('a 0-byte agentbus.db: refused by the server, status and doctor, naming reset; reset starts empty on purpose', async () => {
    const dir = tempDir();
    await usedBusWithoutBackups(dir);
    truncateSync(databasePath(dir), 0);
    rmSync(`${databasePath(dir)}-wal`, { force: true });
    rmSync(`${databasePath(dir)}-shm`, { force: true });
    await refusedThenReset(dir, 'database');
  });

  it('an agentbus file whose tables are all gone: refused the same way', async () => {
    const dir = tempDir();
    await usedBusWithoutBackups(dir);
    const { db } = await openTestDatabase(dir);
    db.exec('PRAGMA foreign_keys = OFF');
    const tables = () => db.all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    // Virtual tables first: dropping one drops its shadow tables.
    for (const t of tables().filter((t) => /^CREATE VIRTUAL/i.test(t.sql))) db.exec(`DROP TABLE "${t.name}"`);
    for (const t of tables()) db.exec(`DROP TABLE "${t.name}"`);
    expect(tables()).toEqual([]);
    db.close();
    await refusedThenReset(dir, 'integrity');
  });

  it('a first start in an empty directory, or over an empty file with no trace of a bus, stays silent', async () => {
    for (const withFile of [false, true]) {
      const dir = tempDir();
      if (withFile) writeFileSync(databasePath(dir), '');
      const server = await startMcp(dir);
      expect((await server.call('register', { name: 'Ann' })).error).toBeUndefined();
      expect(server.stderr()).toBe('');
      await server.close();
    }
  });
});
