import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorCheck } from '../support/doctor-report.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { main } from '../../src/cli/main.js';
import { jsonOf, memoryIo, prepareCliDir, runCli } from './cli-process.js';

describe('agentbus backup', () => {
  it('copies a running bus to a new path; the copy restores with its data and passes doctor', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    await server.call('send', { as: 'Alice', channel: 'work', content: 'kept in the backup' });

    const target = join(tempDir(), 'copy.db');
    const run = await runCli(dir, ['backup', target]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/integrity ok/);
    expect(run.stderr).toBe(''); // piped: no progress
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // The server keeps working while and after the copy is made.
    expect((await server.call('send', { as: 'Alice', channel: 'work', content: 'after' })).seq).toEqual(expect.any(Number));

    const restored = tempDir();
    prepareCliDir(restored);
    copyFileSync(target, join(restored, 'agentbus.db'));
    const status = jsonOf(await runCli(restored, ['status', '--json']));
    expect(status.channels).toContainEqual(expect.objectContaining({ name: 'work', messages: 1 }));
    const doctor = await runCli(restored, ['doctor', '--json']);
    expect(doctor.code).toBe(0);
    expect(doctorCheck(jsonOf(doctor), 'integrity').status).toBe('ok');
    expect(readdirSync(join(target, '..'))).toEqual(['copy.db']); // no partial file left behind
  });

  it('writes to <data>/backups/ by default', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    const run = await runCli(dir, ['backup']);
    expect(run.code).toBe(0);
    const files = readdirSync(join(dir, 'backups'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^agentbus-.*\.db$/);
  });

  it('refuses an existing target with exit 3 and leaves it alone; --force overwrites it', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    const out = tempDir();
    const target = join(out, 'existing.db');
    writeFileSync(target, 'precious');
    const refused = await runCli(dir, ['backup', target]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/--force/);
    expect(readFileSync(target, 'utf8')).toBe('precious');

    const forced = await runCli(dir, ['backup', target, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(target).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('fails with exit 1 when there is no database or the target directory is missing', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    expect((await runCli(dir, ['backup', join(dir, 'x.db')])).code).toBe(1);
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    const missingDir = join(tempDir(), 'no', 'such', 'dir', 'x.db');
    const run = await runCli(dir, ['backup', missingDir]);
    expect(run.code).toBe(1);
    expect(existsSync(missingDir)).toBe(false);
  });

  it('shows progress on stderr when stdout is a terminal, and prints the result on stdout', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    // Shown from the start (0 ms): a bus this small is copied well within the default second.
    const io = memoryIo(dir, { isTty: true, env: { AGENTBUS_PROGRESS_AFTER_MS: '0' } });
    const target = join(tempDir(), 'tty.db');
    expect(await main(['backup', target], io)).toBe(0);
    expect(io.err()).toMatch(/\r\x1b\[Kbacking up .* \.\.\./);
    expect(io.err()).toMatch(/checking the copy's integrity/);
    expect(io.err().endsWith('\r\x1b[K')).toBe(true); // the progress line is cleared before the result
    expect(io.out()).toMatch(/^backed up .*integrity ok\)\n$/);
  });

  it('shows no progress for a backup that takes less than the delay, and leaves no file beside the copy', async () => {
    const dir = tempDir();
    const server = await startMcp(dir);
    await server.call('register', { name: 'Alice' });
    const io = memoryIo(dir, { isTty: true, env: { AGENTBUS_PROGRESS_AFTER_MS: '60000' } });
    const targetDir = tempDir();
    expect(await main(['backup', join(targetDir, 'quiet.db')], io)).toBe(0);
    expect(io.err()).toBe('');
    expect(io.out()).toMatch(/^backed up .*integrity ok\)\n$/);
    expect(readdirSync(targetDir)).toEqual(['quiet.db']);
  });
});
