import { existsSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HistoryOutput } from '../../src/bus/history.js';
import { RegisterOutput } from '../../src/bus/identity.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { jsonOf, prepareCliDir, runCli, waitForPidExit } from '../cli/cli-process.js';
import { doctorCheck } from '../support/doctor-report.js';
import { expectError } from '../support/expect-error.js';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';


/** A bus with three messages, a backup made by `agentbus backup`, and every server stopped. */
async function busWithBackup(dir: string): Promise<string> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  for (const text of ['one', 'two', 'three']) await server.call('send', { as: 'Alice', channel: 'work', content: text });
  const backup = await runCli(dir, ['backup']);
  expect(backup.code).toBe(0);
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
  const backups = readdirSync(join(dir, 'backups'));
  expect(backups).toHaveLength(1);
  return join(dir, 'backups', backups[0] as string);
}

/** Truncates the database to 0 bytes and removes its -wal and -shm: what a bad `> agentbus.db` leaves. */
function emptied(dir: string): string {
  const db = databasePath(dir);
  truncateSync(db, 0);
  rmSync(`${db}-wal`, { force: true });
  rmSync(`${db}-shm`, { force: true });
  return db;
}

describe('a database that lost its content beside backups', () => {
  it('refuses a 0-byte agentbus.db with one line naming the newest backup, and leaves the file as it was', async () => {
    const dir = tempDir();
    const backup = await busWithBackup(dir);
    const db = emptied(dir);

    const error = await expectError(() => openTestDatabase(dir), DbError, 'corrupt');
    expect(error.message).toContain(backup);

    const start = await runCli(dir, ['mcp']);
    expect(start.code).toBe(1);
    const lines = start.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(backup);
    expect(lines[0]).toMatch(/is empty \(0 bytes\)/);
    expect(statSync(db).size).toBe(0);
  });

  it('doctor reports the emptied file as a problem naming the backup; the restore steps it gives bring the messages back', async () => {
    const dir = tempDir();
    const backup = await busWithBackup(dir);
    const db = emptied(dir);
    const doctor = await runCli(dir, ['doctor', '--json']);
    expect(doctor.code).toBe(1);
    expect(doctorCheck(jsonOf(doctor), 'database')).toMatchObject({ status: 'problem', message: expect.stringContaining(`agentbus restore '${backup}'`) });

    const restored = await runCli(dir, ['restore', backup]);
    expect(restored.code).toBe(0);
    expect(statSync(db).size).toBeGreaterThan(0);
    const server = await startMcp(dir);
    // The backup still holds Alice's session from before, so the name may come back suffixed.
    const me = toolAnswer(RegisterOutput, await server.call('register', { name: 'Alice' }), 'register');
    const history = toolAnswer(HistoryOutput, await server.call('history', { as: me.display_name, channel: 'work' }), 'history');
    expect(history.messages.map((m) => m.content)).toEqual(['one', 'two', 'three']);
  });

  it('refuses a file overwritten with something that is not SQLite, naming the backup', async () => {
    const dir = tempDir();
    const backup = await busWithBackup(dir);
    const db = databasePath(dir);
    writeFileSync(db, Buffer.alloc(200_000, 0x41));
    const error = await expectError(() => openTestDatabase(dir), DbError, 'corrupt');
    expect(error.message).toContain(backup);
    expect(statSync(db).size).toBe(200_000);
  });

  it('refuses a 0-byte file whose -wal still holds commits, even without backups', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.exec('PRAGMA wal_autocheckpoint = 0');
    db.transaction(() => db.run("INSERT INTO channels (name, kind) VALUES ('x', 'ordinary')"));
    const path = db.path;
    // Copy the WAL aside before close (closing checkpoints and removes it), then put it back beside an emptied file.
    copyFileSync(`${path}-wal`, join(dir, 'saved-wal'));
    db.close();
    truncateSync(path, 0);
    copyFileSync(join(dir, 'saved-wal'), `${path}-wal`);
    rmSync(`${path}-shm`, { force: true });
    const error = await expectError(() => openTestDatabase(dir), DbError, 'corrupt');
    expect(error.message).toMatch(/-wal holds \d+ bytes/);
  });

  it('still creates a new bus where there is nothing: no file, or an empty file and no backups', async () => {
    const fresh = tempDir();
    const opened = await openTestDatabase(fresh);
    expect(opened.created).toBe(true);
    opened.db.close();

    const empty = tempDir();
    writeFileSync(databasePath(empty), '');
    const reopened = await openTestDatabase(empty);
    expect(reopened.created).toBe(true);
    reopened.db.close();

    const dir = tempDir();
    prepareCliDir(dir);
    const start = await runCli(dir, ['mcp']);
    expect(start.code).toBe(0);
    expect(start.stderr).toBe('');
    expect(existsSync(databasePath(dir))).toBe(true);
  });
});
