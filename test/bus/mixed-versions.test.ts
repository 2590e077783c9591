/**
 * An older agentbus (schema 6, before process identities) and this one on one
 * database, as when a user upgrades while harness sessions of the older
 * version keep running. Real processes of both builds over stdio.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SESSION_EXPIRY_MS } from '../../src/liveness/session-liveness.js';
import { prepareCliDir, runCli } from '../cli/cli-process.js';
import { git, gitRepo, personEnv, writeFiles } from '../reservations/git-repo.js';
import { granted, listed, refused } from '../reservations/reservation-answers.js';
import { killMcp, startMcp } from '../support/mcp-process.js';
import { olderAgentbus, SCHEMA_6_COMMIT } from '../support/older-agentbus.js';
import { tempDir } from '../support/test-driver.js';

/** `git commit` in `repo` as `as`, the guard hook reading the bus in `dataDir`; true when HEAD moved. */
function commitAs(repo: string, dataDir: string, as: string): { ok: boolean; stderr: string } {
  const before = git(repo, ['rev-parse', 'HEAD']);
  const run = spawnSync('git', ['commit', '-q', '-m', 'change'], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...personEnv(), GIT_CONFIG_NOSYSTEM: '1', HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), AGENTBUS_AS: as },
  });
  return { ok: git(repo, ['rev-parse', 'HEAD']) !== before, stderr: run.stderr };
}

describe('an older agentbus beside this one on one database', () => {
  it('a name and exclusive reservation the older agent took over from a crashed newer one stay its own', async () => {
    const older = olderAgentbus(SCHEMA_6_COMMIT);
    const repo = gitRepo();
    const dataDir = tempDir();
    prepareCliDir(dataDir);
    expect((await runCli(dataDir, ['guard', '--install'], { cwd: repo })).code).toBe(0);

    // The older version made the database and runs; this version's first server upgrades it meanwhile.
    const old = await startMcp(dataDir, { cwd: repo, bin: older });
    expect((await old.call('register', { name: 'Ann' })).display_name).toBe('Ann');
    const crashed = await startMcp(dataDir, { cwd: repo });
    expect((await crashed.call('register', { name: 'Sam' })).display_name).toBe('Sam');
    await granted(crashed, { as: 'Sam', paths: ['src/owned.ts'] });
    await killMcp(crashed, 'SIGKILL');

    // The older version frees a name once its wall-clock heartbeat is SESSION_EXPIRY_MS old, and then takes it
    // over writing only the columns it knows: owner and heartbeat, not the dead process's identity.
    await sleep(SESSION_EXPIRY_MS + 1_000);
    expect((await old.call('register', { name: 'Sam' })).display_name).toBe('Sam');
    const reserved = await old.call('reserve', { as: 'Sam', paths: ['src/owned.ts'], reason: 'old agent edits it' });
    expect(reserved.error).toBeUndefined();

    const other = await startMcp(dataDir, { cwd: repo });
    expect((await other.call('register', { name: 'Sam' })).display_name).toBe('Sam2');
    expect((await old.call('discover', { as: 'Sam' })).error).toBeUndefined();
    const seen = (await other.call('discover', { as: 'Sam2' })) as { sessions: { display_name: string }[] };
    expect(seen.sessions.map((s) => s.display_name)).toEqual(['Ann', 'Sam', 'Sam2']);

    const clash = await refused(other, { as: 'Sam2', paths: ['src/owned.ts'] });
    expect(clash.error.code).toBe('conflict');
    expect(clash.error.holders?.map((h) => h.display_name)).toEqual(['Sam']);
    const list = await listed(other, { as: 'Sam2' });
    expect(list.reservations.map((r) => [r.display_name, r.pattern, r.exclusive])).toEqual([['Sam', 'src/owned.ts', true]]);

    writeFiles(repo, { 'src/owned.ts': 'changed by Sam2\n' });
    git(repo, ['add', '-A']);
    const commit = commitAs(repo, dataDir, 'Sam2');
    expect(commit.ok, commit.stderr).toBe(false);
    // The older agent's own calls keep working: it still holds its name and its claim.
    const mine = await old.call('list_reservations', { as: 'Sam' });
    expect(mine.error).toBeUndefined();
    expect((mine as { reservations: { display_name: string }[] }).reservations.map((r) => r.display_name)).toEqual(['Sam']);
    expect(commitAs(repo, dataDir, 'Sam').ok).toBe(true);
  }, 120_000);
});
