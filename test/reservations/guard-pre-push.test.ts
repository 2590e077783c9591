/**
 * The pre-push check `agentbus guard --install` writes beside the pre-commit
 * one (issue 29): the commits being pushed against others' live exclusive
 * reservations, in real repositories pushing to a real bare remote.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRE_PUSH_HOOK_LINE } from '../../src/cli/commands/guard/guard-install.js';
import { runCli } from '../cli/cli-process.js';
import { tempDir, testBusEnv } from '../support/test-driver.js';
import { git, gitRepo, personEnv, writeFiles } from './git-repo.js';
import { agent, guarded } from './guard-repo.js';

interface Push {
  readonly ok: boolean;
  readonly stderr: string;
}

/** `git push` as a person would run it; whether the remote's branch moved is the verdict. */
function push(repo: string, remote: string, dataDir: string, args: readonly string[], env: Record<string, string> = {}): Push {
  const ref = args.find((a) => !a.startsWith('-') && a !== 'origin') ?? 'main';
  const tip = () => spawnSync('git', ['rev-parse', '-q', '--verify', `refs/heads/${ref}`], { cwd: remote, encoding: 'utf8' }).stdout.trim();
  const before = tip();
  const run = spawnSync('git', ['push', '-q', 'origin', ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...personEnv(), GIT_CONFIG_NOSYSTEM: '1', HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testBusEnv(dataDir), ...env },
  });
  expect(tip() !== before, run.stderr).toBe(run.status === 0);
  return { ok: run.status === 0, stderr: run.stderr };
}

/** Commits the files with the pre-commit check skipped, as `git commit --no-verify` does. */
function commitSkipping(repo: string, files: Record<string, string>): void {
  writeFiles(repo, files);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '--no-verify', '-m', Object.keys(files).join(' ')]);
}

describe('agentbus guard: the pre-push hook', () => {
  it('refuses a push whose commits change another agent\'s exclusive reservation, for an existing and a new branch; --no-verify overrides', async () => {
    const { repo, dataDir } = await guarded();
    const remote = realpathSync(tempDir('agentbus-remote-'));
    git(remote, ['init', '-q', '--bare']);
    git(repo, ['remote', 'add', 'origin', remote]);
    git(repo, ['push', '-q', '--no-verify', 'origin', 'main']);
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'], reason: 'rewriting' });

    commitSkipping(repo, { 'docs/a.md': '1\n' });
    expect(push(repo, remote, dataDir, ['main'])).toEqual({ ok: true, stderr: '' });
    commitSkipping(repo, { 'src/a.ts': '1\n' });
    commitSkipping(repo, { 'docs/b.md': '1\n' });
    const refusedPush = push(repo, remote, dataDir, ['main']);
    expect(refusedPush.ok).toBe(false);
    expect(refusedPush.stderr).toContain('agentbus guard: push refused: its commits change files Alice reserved exclusively in');
    expect(refusedPush.stderr).toMatch(/ {2}src\/a\.ts {2}reserved by Alice \("src\/\*\*", exclusive, .*\): rewriting/);
    expect(refusedPush.stderr).not.toContain('docs/b.md');
    // A new branch: only its commits no remote-tracking branch has count.
    git(repo, ['checkout', '-q', '-b', 'side', 'origin/main']);
    commitSkipping(repo, { 'lib/x.ts': '1\n' });
    expect(push(repo, remote, dataDir, ['side']).ok).toBe(true);
    git(repo, ['checkout', '-q', 'main']);
    expect(push(repo, remote, dataDir, ['main:other']).ok).toBe(false);
    // The committer's own reservation, or --no-verify, lets it through.
    expect(push(repo, remote, dataDir, ['main'], { AGENTBUS_AS: 'Alice' }).ok).toBe(true);
    commitSkipping(repo, { 'src/b.ts': '1\n' });
    expect(push(repo, remote, dataDir, ['--no-verify', 'main']).ok).toBe(true);
  });

  it('never blocks a push because agentbus is broken, and is not written over a foreign pre-push hook', async () => {
    const { repo, dataDir } = await guarded();
    const remote = realpathSync(tempDir('agentbus-remote-'));
    git(remote, ['init', '-q', '--bare']);
    git(repo, ['remote', 'add', 'origin', remote]);
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['**'] });
    commitSkipping(repo, { 'a.txt': '1\n' });
    expect(push(repo, remote, dataDir, ['main']).ok).toBe(false);
    // A data directory without a file, and no server named (an empty AGENTBUS_DATABASE_URL is none).
    const missing = push(repo, remote, dataDir, ['main'], { AGENTBUS_DATA_DIR: join(tempDir(), 'none'), AGENTBUS_DATABASE_URL: '' });
    expect([missing.ok, missing.stderr]).toEqual([true, expect.stringMatching(/^agentbus guard: there is no agentbus database at .* yet, so nothing is reserved; allowing the push\n$/)]);
    commitSkipping(repo, { 'b.txt': '1\n' });
    const hook = join(repo, '.git', 'hooks', 'pre-push');
    writeFileSync(hook, readFileSync(hook, 'utf8').replace(/^bin='[^']*'$/m, "bin='/nonexistent/agentbus.js'"));
    const vanished = push(repo, remote, dataDir, ['main']);
    expect([vanished.ok, vanished.stderr]).toEqual([true, expect.stringMatching(/^agentbus guard: \/nonexistent\/agentbus\.js or .* is gone .*allowing the push .*\n$/)]);

    const other = gitRepo();
    const foreign = join(other, '.git', 'hooks', 'pre-push');
    writeFileSync(foreign, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const refusedInstall = await runCli(dataDir, ['guard', '--install'], { cwd: other });
    expect(refusedInstall.code).toBe(3);
    expect(refusedInstall.stderr).toContain(PRE_PUSH_HOOK_LINE);
    expect(readFileSync(foreign, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });
});
