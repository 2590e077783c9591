import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_LINE, HOOK_MARKER } from '../../src/cli/commands/guard/guard-install.js';
import { runCli } from '../cli/cli-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { stopCleanly } from './clean-exit.js';
import { git, gitRepo, gitWorktree, writeFiles } from './git-repo.js';
import { agent, commit, guarded, type Commit } from './guard-repo.js';
import { granted } from './reservation-answers.js';

describe('agentbus guard in a real git repository, real commits', () => {
  it('--install writes an executable hook, updates its own, and refuses to replace a foreign one', async () => {
    const { repo, dataDir } = await guarded();
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    expect(statSync(hook).mode & 0o777).toBe(0o755);
    expect(readFileSync(hook, 'utf8')).toContain(HOOK_MARKER);
    const again = await runCli(dataDir, ['guard', '--install'], { cwd: repo });
    expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(/^updated /)]);
    // From a worktree: the hooks directory is the one all worktrees share.
    const worktree = gitWorktree(repo, 'side');
    expect((await runCli(dataDir, ['guard', '--install'], { cwd: worktree })).stdout).toContain(`updated ${hook}`);

    const other = gitRepo();
    const foreign = join(other, '.git', 'hooks', 'pre-commit');
    writeFileSync(foreign, '#!/bin/sh\nnpm run lint\n', { mode: 0o755 });
    const refused = await runCli(dataDir, ['guard', '--install'], { cwd: other });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`nothing changed: ${foreign} already exists and was not written by agentbus`);
    expect(refused.stderr).toContain(HOOK_LINE);
    expect(readFileSync(foreign, 'utf8')).toBe('#!/bin/sh\nnpm run lint\n');
    // Neither hook is written while one is in the way.
    expect(existsSync(join(other, '.git', 'hooks', 'pre-push'))).toBe(false);
    const outside = await runCli(dataDir, ['guard', '--install'], { cwd: tempDir() });
    expect([outside.code, outside.stderr]).toEqual([1, expect.stringMatching(/not inside a git repository/)]);
  });

  it('refuses a commit touching another agent\'s exclusive reservation, naming path, holder, pattern and reason; --no-verify overrides', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/cli/**'], reason: 'rewriting the CLI' });
    writeFiles(repo, { 'src/cli/main.ts': 'x\n', 'docs/a.md': 'y\n' });
    git(repo, ['add', '-A']);
    const refused = commit(repo, dataDir, []);
    expect(refused.ok, refused.stderr).toBe(false);
    expect(refused.stderr).toContain(`agentbus guard: commit refused: it touches files Alice reserved exclusively in ${repo}:`);
    expect(refused.stderr).toMatch(/ {2}src\/cli\/main\.ts {2}reserved by Alice \("src\/cli\/\*\*", exclusive, expires .*\): rewriting the CLI/);
    expect(refused.stderr).not.toContain('docs/a.md');
    expect(refused.stderr).toMatch(/The committer is not known .*AGENTBUS_AS=<your display name>/);
    expect(refused.stderr).toContain('git commit --no-verify');
    expect(commit(repo, dataDir, ['--no-verify']).ok).toBe(true);
  });

  it('lets through what no one else reserved exclusively: unreserved paths, shared reservations, the committer\'s own', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    const bob = await agent(dataDir, repo, 'Bob');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'] });
    await bob.call('reserve', { as: 'Bob', paths: ['docs/**'], exclusive: false });
    writeFiles(repo, { 'docs/a.md': '1\n', 'test/a.test.ts': '1\n' });
    git(repo, ['add', '-A']);
    const allowed = commit(repo, dataDir, []);
    expect(allowed).toEqual({ ok: true, stderr: '' });

    writeFiles(repo, { 'src/app.ts': '1\n' });
    git(repo, ['add', '-A']);
    // Alice commits her own reserved files: named by AGENTBUS_AS, by --as in the hook, or by the identity file.
    expect(commit(repo, dataDir, [], { AGENTBUS_AS: 'Bob' }).stderr).toContain('Committing as Bob (from AGENTBUS_AS)');
    expect(commit(repo, dataDir, [], { AGENTBUS_AS: 'Alice' }).ok).toBe(true);
    writeFiles(repo, { 'src/app.ts': '2\n' });
    git(repo, ['add', '-A']);
    writeFiles(repo, { '.local/agentbus.json': JSON.stringify({ identity: 'Bob' }) });
    expect(commit(repo, dataDir, []).stderr).toContain(`Committing as Bob (from ${join(repo, '.local', 'agentbus.json')})`);
    writeFiles(repo, { '.local/agentbus.json': JSON.stringify({ identity: 'Alice' }) });
    expect(commit(repo, dataDir, []).ok).toBe(true);
  });

  it('counts both sides of a rename and the temporary index of commit -a', async () => {
    const { repo, dataDir } = await guarded();
    writeFiles(repo, { 'src/a.ts': '1\n', 'lib/b.ts': '1\n' });
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '--no-verify', '-m', 'files']);
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/a.ts'] });
    git(repo, ['mv', 'src/a.ts', 'lib/a.ts']);
    expect(commit(repo, dataDir, []).stderr).toMatch(/ {2}src\/a\.ts {2}reserved by Alice/);
    git(repo, ['reset', '-q', '--hard']);
    writeFiles(repo, { 'src/a.ts': '2\n' });
    expect(commit(repo, dataDir, ['-a']).stderr).toMatch(/ {2}src\/a\.ts {2}reserved by Alice/);
    writeFiles(repo, { 'src/a.ts': '1\n', 'lib/b.ts': '2\n' });
    expect(commit(repo, dataDir, ['-a']).ok).toBe(true);
  });

  it('a reservation made in one worktree guards commits in another worktree of the same clone', async () => {
    const { repo, dataDir } = await guarded();
    const worktree = gitWorktree(repo, 'feature');
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'], reason: 'refactor' });
    writeFiles(worktree, { 'src/x.ts': '1\n' });
    git(worktree, ['add', '-A']);
    expect(commit(worktree, dataDir, []).stderr).toContain('reserved by Alice ("src/**"');
  });

  it('ended reservations do not refuse: released, expired, or held by a process that exited', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['a/**', 'b/**'] });
    const short = await granted(alice, { as: 'Alice', paths: ['c/**'], ttl_seconds: 1 });
    await alice.call('release', { as: 'Alice', paths: ['a/**'] });
    writeFiles(repo, { 'a/x': '1\n' });
    git(repo, ['add', '-A']);
    expect(commit(repo, dataDir, []).ok).toBe(true);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(short.reservations[0]!.expires_at) - Date.now()) + 50));
    writeFiles(repo, { 'c/x': '1\n' });
    git(repo, ['add', '-A']);
    expect(commit(repo, dataDir, []).ok).toBe(true);
    writeFiles(repo, { 'b/x': '1\n' });
    git(repo, ['add', '-A']);
    expect(commit(repo, dataDir, []).ok).toBe(false);
    await stopCleanly(alice);
    expect(commit(repo, dataDir, []).ok).toBe(true);
  });

  it('the guard as a command: exit 0 with nothing staged or nothing hit, 3 when refused', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'] });
    expect(await runCli(dataDir, ['guard'], { cwd: repo })).toEqual({ code: 0, stdout: '', stderr: '' });
    writeFiles(repo, { 'src/a.ts': '1\n' });
    git(repo, ['add', '-A']);
    const refused = await runCli(dataDir, ['guard'], { cwd: repo });
    expect([refused.code, refused.stdout]).toEqual([3, '']);
    expect((await runCli(dataDir, ['guard', '--as', 'Alice'], { cwd: repo })).code).toBe(0);
    // A subagent works under its parent's claims; a sibling's name does not.
    expect((await runCli(dataDir, ['guard', '--as', 'Alice/helper'], { cwd: repo })).code).toBe(0);
    expect((await runCli(dataDir, ['guard', '--as', 'Bob/helper'], { cwd: repo })).code).toBe(3);
    mkdirSync(join(repo, 'sub'));
    // From a subdirectory too (paths are the repository's, not the directory's).
    expect((await runCli(dataDir, ['guard'], { cwd: join(repo, 'sub') })).code).toBe(3);
  });
});
