/**
 * Who the commit guard counts as committing, and which Node reads the bus
 * (issue 29): the harness session's names, subagents under their parent's
 * claims, a Node 20 hook on a posix bus, and a clear word outside a repository.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, prepareCliDir, runCli } from '../cli/cli-process.js';
import { AGENTBUS_BIN, startMcp } from '../support/mcp-process.js';
import { node22, nodeWasmOnly } from '../support/node-versions.js';
import { tempDir, testDriverName } from '../support/test-driver.js';
import { git, gitRepo, writeFiles } from './git-repo.js';
import { agent, commit, guarded, type Commit } from './guard-repo.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Commits until `done` says the answer is final or 5 s pass (a server records its names in its inbox file within about a second). */
async function commitUntil(repo: string, dataDir: string, done: (c: Commit) => boolean): Promise<Commit> {
  const until = Date.now() + 5000;
  for (;;) {
    const c = commit(repo, dataDir, []);
    if (done(c) || Date.now() > until) return c;
    await sleep(200);
  }
}

describe('the guard knows the harness session committing', () => {
  it('an agent commits its own reserved file from its harness with no AGENTBUS_AS and no identity file; others\' claims still refuse', async () => {
    const { repo, dataDir } = await guarded();
    // This test process is Alice's harness (it spawned her server) and runs the commits; Bob has a harness of his own.
    const alice = await startMcp(dataDir, { cwd: repo });
    expect((await alice.call('register', { name: 'Alice' })).display_name).toBe('Alice');
    const bob = await agent(dataDir, repo, 'Bob');
    await alice.call('reserve', { as: 'Alice', paths: ['src/a.ts'] });
    await bob.call('reserve', { as: 'Bob', paths: ['docs/**'] });
    writeFiles(repo, { 'src/a.ts': '1\n' });
    git(repo, ['add', '-A']);
    expect((await commitUntil(repo, dataDir, (c) => c.ok)).ok).toBe(true);
    writeFiles(repo, { 'docs/x.md': '1\n' });
    git(repo, ['add', '-A']);
    const refused = commit(repo, dataDir, []);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('reserved by Bob');
    expect(refused.stderr).toContain('Committing as Alice (this harness session)');
  });

  it('a subagent commits under its parent\'s claim and reserves inside it; a sibling of the parent cannot', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    expect((await alice.call('register', { name: 'task', parent: 'Alice' })).display_name).toBe('Alice/task');
    const bob = await agent(dataDir, repo, 'Bob');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'] });
    expect((await alice.call('reserve', { as: 'Alice/task', paths: ['src/a.ts'] })).reservations).toHaveLength(1);
    expect(((await bob.call('reserve', { as: 'Bob', paths: ['src/b.ts'] })).error as { code: string }).code).toBe('conflict');
    writeFiles(repo, { 'src/a.ts': '1\n', 'src/b.ts': '1\n' });
    git(repo, ['add', '-A']);
    expect(commit(repo, dataDir, [], { AGENTBUS_AS: 'Alice/task' }).ok).toBe(true);
    writeFiles(repo, { 'src/b.ts': '2\n' });
    git(repo, ['add', '-A']);
    expect(commit(repo, dataDir, [], { AGENTBUS_AS: 'Bob/task' }).ok).toBe(false);
  });

  it('outside a git repository the warning says so', async () => {
    const dataDir = tempDir();
    prepareCliDir(dataDir);
    const run = await runCli(dataDir, ['guard'], { cwd: tempDir() });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^agentbus guard: could not check file reservations \(RepositoryLookupError: .* is not inside a git worktree \(fatal: not a git repository.*\); allowing the commit\n$/);
  });
});

describe('a hook installed with a Node that cannot read the bus', () => {
  it(`finds one that can, or says loudly at install and at commit time that nothing is checked (${testDriverName()} bus)`, async () => {
    const old = nodeWasmOnly();
    expect(old.env).toEqual({});
    const modern = node22().bin;
    const repo = gitRepo();
    const dataDir = tempDir();
    prepareCliDir(dataDir);
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'] });
    const install = (path: string) =>
      spawnSync(old.bin, [AGENTBUS_BIN, 'guard', '--install'], { cwd: repo, encoding: 'utf8', env: cliEnv(dataDir, { PATH: path }) });
    const hookNode = () => /^node='([^']*)'$/m.exec(readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8'))?.[1];
    const withModern = `${dirname(modern)}:/usr/bin:/bin`;
    const found = install(withModern);
    expect(found.status, found.stderr).toBe(0);
    writeFiles(repo, { 'src/a.ts': '1\n' });
    git(repo, ['add', '-A']);
    if (testDriverName() === 'native') {
      // A posix bus: the Node 20 that installed cannot read it, the Node 22 on PATH can.
      expect(found.stderr).toContain(`cannot read the posix bus; the hooks run ${join(dirname(modern), 'node')}, which can`);
      expect(hookNode()).toBe(join(dirname(modern), 'node'));
    } else {
      expect([found.stderr, hookNode()]).toEqual(['', old.bin]);
    }
    expect(commit(repo, dataDir, [], { PATH: withModern }).ok).toBe(false);

    // The hook's Node cannot read the bus (written so by hand, or the bus converted since): the guard hands the check over.
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, readFileSync(hook, 'utf8').replace(/^node='[^']*'$/m, `node='${old.bin}'`));
    expect(commit(repo, dataDir, [], { PATH: withModern }).ok).toBe(false);
    if (testDriverName() !== 'native') return;
    // No Node on PATH can read it: loud at install time, loud at commit time, and the commit goes through.
    const none = install('/usr/bin:/bin');
    expect(none.status).toBe(0);
    expect(none.stderr).toMatch(/^agentbus guard: WARNING: file reservations are NOT checked: .* uses the posix lock protocol/);
    const unchecked = commit(repo, dataDir, [], { PATH: '/usr/bin:/bin' });
    expect(unchecked.ok).toBe(true);
    expect(unchecked.stderr).toMatch(/^agentbus guard: WARNING: file reservations are NOT checked: .*; allowing the commit\n$/);
  });
});
