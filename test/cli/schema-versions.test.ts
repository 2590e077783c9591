/**
 * The schema beside this agentbus's: reading commands never upgrade a
 * database older agents still use, and doctor says which side to upgrade.
 * The older database is made by the schema-6 release itself (a real build
 * of it, test/support/older-agentbus.ts), running beside these commands.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import { compareSchema } from '../../src/db/open/schema-compatibility.js';
import { doctorCheck } from '../support/doctor-report.js';
import { startMcp } from '../support/mcp-process.js';
import { olderAgentbus, SCHEMA_6_COMMIT } from '../support/older-agentbus.js';
import { openTestDatabase, tempDir, testDriver } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli } from './cli-process.js';

/** The newest migration recorded in the database in `dir`, read without upgrading it. */
async function schemaVersion(dir: string): Promise<number> {
  const db = new Database((await testDriver()).open(join(dir, 'agentbus.db'), { busyTimeoutMs: 5_000 }));
  try {
    return db.get<{ v: number }>('SELECT max(version) AS v FROM schema_migrations')!.v;
  } finally {
    db.close();
  }
}

describe('reading commands and doctor beside another schema', () => {
  it('status, tail, search, memory and doctor leave an older agent\'s database as it is, so the older agent can still restart', async () => {
    const older = olderAgentbus(SCHEMA_6_COMMIT);
    const dir = tempDir();
    prepareCliDir(dir);
    const old = await startMcp(dir, { bin: older });
    expect((await old.call('register', { name: 'Ann' })).display_name).toBe('Ann');
    expect((await old.call('send', { as: 'Ann', channel: 'general', content: 'written by the older version' })).error).toBeUndefined();
    expect(await schemaVersion(dir)).toBe(6);

    const status = await runCli(dir, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = jsonOf(status);
    expect(report.database).toMatchObject({ exists: true, schema_version: 6 });
    expect(report.notices.map((n: { kind: string }) => n.kind)).toEqual(['schema_older']);
    expect((await runCli(dir, ['status'])).stdout).toMatch(/schema v6/);
    for (const args of [['tail'], ['search', 'written'], ['memory', 'list']]) {
      const run = await runCli(dir, args);
      expect([run.code, run.stderr], args.join(' ')).toEqual([3, expect.stringMatching(/^agentbus: schema_older: /)]);
    }
    const doctor = await runCli(dir, ['doctor', '--json']);
    expect(doctorCheck(jsonOf(doctor), 'schema')).toMatchObject({ status: 'ok', message: expect.stringMatching(/^schema version 6, older than this agentbus \(\d+\)/) });
    expect(await schemaVersion(dir)).toBe(6);

    // The older agent's session ends and a new one of the same version starts: it opens the file.
    await old.close();
    const restarted = await startMcp(dir, { bin: older });
    expect((await restarted.call('register', { name: 'Ann' })).display_name).toBe('Ann');
    const history = (await restarted.call('history', { as: 'Ann', channel: 'general' })) as { messages: { content: string }[] };
    expect(history.messages.map((m) => m.content)).toEqual(['written by the older version']);
  }, 60_000);

  it('a newer schema: doctor says to upgrade this agentbus and exits 1; readers refuse it and change nothing', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const { db } = await openTestDatabase(dir);
    const known = compareSchema(db).known;
    // What a newer agentbus leaves: one more migration in the ledger.
    db.run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, '9999_from_the_future.sql', 'x', 0)", [known + 1]);
    db.close();
    const before = readFileSync(join(dir, 'agentbus.db'));

    const doctor = await runCli(dir, ['doctor', '--json']);
    expect(doctor.code).toBe(1);
    expect(doctorCheck(jsonOf(doctor), 'schema').status).toBe('problem');
    for (const args of [['status'], ['tail'], ['search', 'x']]) {
      const run = await runCli(dir, args);
      expect([run.code, run.stderr.trim().split('\n')], args.join(' ')).toEqual([1, [expect.stringMatching(/^agentbus: /)]]);
    }
    expect(readFileSync(join(dir, 'agentbus.db'))).toEqual(before);
  });
});
