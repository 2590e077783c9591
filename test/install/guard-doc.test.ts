import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_LINE, HOOK_MARKER } from '../../src/cli/commands/guard/guard-install.js';
import { git, gitRepo, personEnv, writeFiles } from '../reservations/git-repo.js';
import { fixturePath } from '../support/child-process.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir, testBusEnv } from '../support/test-driver.js';
import { REPO_ROOT, installSnippets, localised, snippet } from './doc-snippets.js';

const snippets = installSnippets();

/** A directory holding `agentbus` as `npm link` puts it on PATH. */
function linkedBin(): string {
  const bin = tempDir();
  symlinkSync(join(REPO_ROOT, 'bin', 'agentbus.js'), join(bin, 'agentbus'));
  return bin;
}

/** `git commit` with the hook seeing the bus in `dataDir` and `path` as PATH; true when the commit was made. */
function commits(repo: string, dataDir: string, path: string): { ok: boolean; stderr: string } {
  const clean = personEnv();
  const run = spawnSync('git', ['commit', '-q', '-m', 'change'], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...clean, PATH: path, HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json'), ...testBusEnv(dataDir) },
  });
  return { ok: run.status === 0, stderr: run.stderr };
}

describe('docs/install.md: the commit guard', () => {
  it('the install one-liner writes the hook, which refuses a commit on another agent\'s exclusive reservation', async () => {
    const lines = snippet(snippets, 'guard-install').text.trim().split('\n');
    expect(lines).toHaveLength(1);
    const repo = gitRepo();
    const out = execFileSync('/bin/sh', ['-c', localised(lines[0]!)], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: repo },
    });
    expect(out).toMatch(/^installed .*pre-commit/);
    expect(readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8')).toContain(HOOK_MARKER);

    const dataDir = tempDir();
    // In a harness of her own: the commits below are a person's, not her harness session's.
    const alice = await startMcp(dataDir, { cwd: repo, bin: fixturePath('harness-shim.cjs') });
    await alice.call('register', { name: 'Alice' });
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'], reason: 'refactor' });
    writeFiles(repo, { 'src/a.ts': '1\n' });
    git(repo, ['add', '-A']);
    // The hook needs nothing on PATH but git's own: it names node and agentbus by absolute path.
    const refused = commits(repo, dataDir, '/usr/bin:/bin');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('reserved by Alice ("src/**", exclusive');
  });

  it('the line for an existing hook refuses on a reservation, allows otherwise, and allows when agentbus is not installed', async () => {
    const line = snippet(snippets, 'guard-hook-line').text.trim();
    expect(line).toBe(HOOK_LINE);
    const repo = gitRepo();
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\necho "lint ok" >&2\n', { mode: 0o755 });
    appendFileSync(hook, `${line}\n`);
    const dataDir = tempDir();
    // In a harness of her own: the commits below are a person's, not her harness session's.
    const alice = await startMcp(dataDir, { cwd: repo, bin: fixturePath('harness-shim.cjs') });
    await alice.call('register', { name: 'Alice' });
    await alice.call('reserve', { as: 'Alice', paths: ['src/**'] });
    const path = `${linkedBin()}:${dirname(process.execPath)}:/usr/bin:/bin`;

    writeFiles(repo, { 'docs/a.md': '1\n' });
    git(repo, ['add', '-A']);
    expect(commits(repo, dataDir, path)).toEqual({ ok: true, stderr: 'lint ok\n' });
    writeFiles(repo, { 'src/a.ts': '1\n' });
    git(repo, ['add', '-A']);
    const refused = commits(repo, dataDir, path);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('reserved by Alice ("src/**", exclusive');
    // Without agentbus on PATH the shell reports it and the commit goes through.
    const missing = commits(repo, dataDir, `${dirname(process.execPath)}:/usr/bin:/bin`);
    expect(missing.ok).toBe(true);
    expect(missing.stderr).toMatch(/agentbus: .*not found/);
  });

  it('the AGENTS.md snippet tells agents to reserve before editing shared files and to release after', () => {
    const text = snippet(snippets, 'agents-md').text;
    expect(text).toMatch(/`reserve`/);
    expect(text).toMatch(/`release`/);
    expect(text).toMatch(/`conflict`/);
  });
});
