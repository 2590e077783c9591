/**
 * Plain names that are files cover only themselves (issue 29): one agent's
 * `**\/*.md` no longer conflicts with every single-file claim, while a
 * directory (or a name not in the worktree yet) still covers what is below it.
 */
import { describe, expect, it } from 'vitest';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { git, gitRepo, writeFiles } from './git-repo.js';
import { granted, listed, refused } from './reservation-answers.js';

async function two(repo: string): Promise<[McpProcess, McpProcess]> {
  const dir = tempDir();
  const alice = await startMcp(dir, { cwd: repo });
  const bob = await startMcp(dir, { cwd: repo });
  await alice.call('register', { name: 'Alice' });
  await bob.call('register', { name: 'Bob' });
  return [alice, bob];
}

describe('reservations of files and directories', () => {
  it("Alice's **/*.md blocks no tracked or present file outside it; a directory, or a name not created yet, still conflicts", async () => {
    const repo = gitRepo();
    writeFiles(repo, { 'src/a.ts': '1\n', 'docs/guide.md': '1\n', 'lib/util/x.ts': '1\n' });
    git(repo, ['add', 'docs/guide.md']);
    git(repo, ['commit', '-q', '--no-verify', '-m', 'files']);
    // Tracked (staged, not committed) and so known to git; lib/util/x.ts is only present in the worktree.
    git(repo, ['add', 'src/a.ts']);
    const [alice, bob] = await two(repo);
    await granted(alice, { as: 'Alice', paths: ['**/*.md'] });
    // A tracked file, and an untracked file present in the worktree.
    expect((await granted(bob, { as: 'Bob', paths: ['src/a.ts', 'lib/util/x.ts'] })).reservations).toHaveLength(2);
    // A tracked .md file is one Alice holds; a directory and a name not yet in the worktree may hold .md files.
    for (const path of ['docs/guide.md', 'lib', 'src/new-dir']) {
      const no = await refused(bob, { as: 'Bob', paths: [path] });
      expect([no.error.code, no.error.holders?.map((h) => h.overlaps)]).toEqual(['conflict', [[path]]]);
    }
    // A file held by Bob covers nothing below it, and a directory above a file still covers it.
    expect((await refused(alice, { as: 'Alice', paths: ['src'] })).error.holders?.map((h) => h.pattern)).toEqual(['src/a.ts']);
    // list_reservations decides overlap the same way.
    const listing = await listed(bob, { as: 'Bob', paths: ['src/a.ts'] });
    expect(listing.reservations.map((r) => [r.display_name, r.pattern])).toEqual([['Bob', 'src/a.ts']]);
    expect((await listed(bob, { as: 'Bob', paths: ['lib'] })).reservations.map((r) => r.display_name)).toEqual(['Alice', 'Bob']);
  });
});
