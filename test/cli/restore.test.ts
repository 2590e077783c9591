import { copyFileSync, existsSync, openSync, closeSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli, waitForPidExit } from './cli-process.js';

/** A bus with `work` holding `before`, a backup of it, then `after` sent; the server is SIGKILLed so its -wal stays. */
async function busWithBackupThenMore(dir: string): Promise<string> {
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await server.call('send', { as: 'Alice', channel: 'work', content: 'before' });
  const backup = join(tempDir(), 'bus.db');
  expect((await runCli(dir, ['backup', backup])).code).toBe(0);
  await server.call('send', { as: 'Alice', channel: 'work', content: 'after' });
  const pid = server.transport.pid!;
  process.kill(pid, 'SIGKILL');
  await waitForPidExit(pid);
  await server.close();
  return backup;
}

async function contents(dataDir: string): Promise<string[]> {
  const { db } = await openTestDatabase(dataDir);
  try {
    return db.all<{ content: string }>("SELECT content FROM messages WHERE channel = 'work' ORDER BY seq").map((r) => r.content);
  } finally {
    db.close();
  }
}

describe('agentbus restore', () => {
  it('puts a checked backup in place, keeps the replaced database (with its -wal) aside, and leaves no stale side files', async () => {
    const dir = tempDir();
    const backup = await busWithBackupThenMore(dir);
    const backupBytes = readFileSync(backup);
    const run = await runCli(dir, ['restore', backup]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const aside = /kept as (\S+replaced\.db)/.exec(run.stdout)?.[1];
    expect(run.stdout).toMatch(/^restored .* \(integrity ok, (posix|portable) lock protocol\)/);
    expect(aside).toMatch(new RegExp(`^${join(dir, 'backups')}/agentbus-.*-replaced\\.db$`));

    expect(await contents(dir)).toEqual(['before']);
    expect(readFileSync(backup)).toEqual(backupBytes); // the backup itself is only read
    expect(statSync(join(dir, 'agentbus.db')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.startsWith('agentbus.db')).sort()).toEqual(['agentbus.db']);

    // The replaced database kept everything it had, the WAL's last commit included.
    const look = tempDir();
    copyFileSync(aside!, join(look, 'agentbus.db'));
    if (existsSync(`${aside}-wal`)) copyFileSync(`${aside}-wal`, join(look, 'agentbus.db-wal'));
    expect(await contents(look)).toEqual(['before', 'after']);

    const doctor = await runCli(dir, ['doctor', '--json']);
    expect(doctor.code, doctor.stdout).toBe(0);
    const status = jsonOf(await runCli(dir, ['status', '--json']));
    expect(status.channels).toContainEqual(expect.objectContaining({ name: 'work', messages: 1 }));
  });

  it('refuses with exit 3 while a server has the database open, naming it, and changes nothing', async () => {
    const dir = tempDir();
    const backup = await busWithBackupThenMore(dir);
    const server = await startMcp(dir);
    await server.call('register', { name: 'Bob' });
    // Registry entries of dead processes (the SIGKILLed server's) may be tidied away; nothing else may change.
    const files = () => readdirSync(dir, { recursive: true }).filter((f) => !String(f).startsWith('agentbus.db.openers/')).sort();
    const before = files();
    const bytes = readFileSync(join(dir, 'agentbus.db'));
    const run = await runCli(dir, ['restore', backup]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`pid ${server.transport.pid}`);
    expect(run.stderr).toMatch(/nothing changed/);
    expect(files()).toEqual(before);
    expect(readdirSync(join(dir, 'agentbus.db.openers')).filter((f) => f.startsWith(`${server.transport.pid}-`))).toHaveLength(1);
    expect(readFileSync(join(dir, 'agentbus.db'))).toEqual(bytes);
    expect((await server.call('send', { as: 'Bob', channel: 'work', content: 'still here' })).seq).toEqual(expect.any(Number));
  });

  it('refuses a damaged backup and one from a newer agentbus before touching anything (exit 1)', async () => {
    const dir = tempDir();
    const backup = await busWithBackupThenMore(dir);
    const damaged = join(tempDir(), 'damaged.db');
    copyFileSync(backup, damaged);
    const pages = statSync(damaged).size / 4096;
    const fd = openSync(damaged, 'r+');
    for (let page = 1; page < pages; page++) writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, page * 4096 + 100);
    closeSync(fd);
    const bad = await runCli(dir, ['restore', damaged]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/fails its integrity check/);
    expect(bad.stderr).toMatch(/nothing changed/);

    // A backup from a newer agentbus: it records a migration this one does not have.
    const look = tempDir();
    copyFileSync(backup, join(look, 'agentbus.db'));
    const opened = await openTestDatabase(look);
    opened.db.transaction(() => opened.db.run("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, 'future', 'x', 0)"));
    opened.db.close();
    const future = await runCli(dir, ['restore', join(look, 'agentbus.db')]);
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(/cannot be restored here: .*newer than this agentbus knows/);
    expect(await contents(dir)).toEqual(['before', 'after']);
    expect(readdirSync(dir).filter((f) => f.includes('restoring'))).toEqual([]);
  });

  it('restores into a data directory that has no database yet, and explains its usage', async () => {
    const dir = tempDir();
    const backup = await busWithBackupThenMore(dir);
    const fresh = tempDir();
    prepareCliDir(fresh);
    const run = await runCli(fresh, ['restore', backup]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/kept as/);
    expect(await contents(fresh)).toEqual(['before']);

    const missing = await runCli(fresh, ['restore']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/restore needs the backup file/);
    const help = await runCli(fresh, ['restore', '--help']);
    expect(help.stdout).toContain('Examples');
    expect(help.stdout).toContain('Exit codes: 0 done, 1 failed, 2 usage error, 3 refused');
    expect((await runCli(fresh, ['backup', '--help'])).stdout).toContain('agentbus restore');
  });
});
