/**
 * The commit guard never blocks a commit because agentbus is broken: a
 * missing, foreign, damaged or locked database file, a bad config or name, a
 * vanished agentbus (on a server: test/postgres/cli-on-server.test.ts).
 */
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { stopCleanly } from './clean-exit.js';
import { git, writeFiles } from './git-repo.js';
import { agent, commit, guarded, type Commit } from './guard-repo.js';

describe('agentbus guard beside a broken bus file', () => {
  it('never blocks a commit because agentbus is broken: missing, foreign, damaged or locked database, bad config, bad --as, a vanished agentbus', async () => {
    const { repo, dataDir } = await guarded();
    const alice = await agent(dataDir, repo, 'Alice');
    await alice.call('reserve', { as: 'Alice', paths: ['**'] });
    let n = 0;
    const stageAndCommit = (env: Record<string, string> = {}): Commit => {
      writeFiles(repo, { [`f${n++}.txt`]: 'x\n' });
      git(repo, ['add', '-A']);
      return commit(repo, dataDir, [], env);
    };
    // Working agentbus: Alice's live reservation of everything refuses.
    expect(stageAndCommit().ok).toBe(false);

    const missing = stageAndCommit({ AGENTBUS_DATA_DIR: join(tempDir(), 'no-such-dir') });
    expect(missing.ok).toBe(true);
    expect(missing.stderr).toMatch(/agentbus guard: there is no agentbus database at .*no-such-dir\/agentbus\.db yet, so nothing is reserved; allowing the commit/);

    const garbage = tempDir();
    writeFileSync(join(garbage, 'agentbus.db'), 'this is not a database, just text that is long enough to fill a header '.repeat(4));
    const foreign = stageAndCommit({ AGENTBUS_DATA_DIR: garbage });
    expect(foreign.ok).toBe(true);
    expect(foreign.stderr).toMatch(/could not check file reservations \(.*is not a SQLite database\); allowing the commit/);

    // A copy of the real database with every page after the header overwritten: SQLite reports it malformed.
    const damaged = tempDir();
    const bytes = readFileSync(join(dataDir, 'agentbus.db'));
    writeFileSync(join(damaged, 'agentbus.db'), bytes);
    const fd = openSync(join(damaged, 'agentbus.db'), 'r+');
    writeSync(fd, Buffer.alloc(bytes.length - 100, 0xa5), 0, bytes.length - 100, 100);
    closeSync(fd);
    const corrupt = stageAndCommit({ AGENTBUS_DATA_DIR: damaged });
    expect(corrupt.ok).toBe(true);
    expect(corrupt.stderr).toMatch(/could not check file reservations \(DbError: .*malformed.*\); allowing the commit/);

    writeFileSync(join(dataDir, 'bad-config.json'), '{"sqlite_budget_mib": "lots"}');
    const badConfig = stageAndCommit({ AGENTBUS_CONFIG: join(dataDir, 'bad-config.json') });
    expect([badConfig.ok, badConfig.stderr]).toEqual([true, expect.stringMatching(/could not check .*sqlite_budget_mib.*allowing the commit/)]);

    const badName = stageAndCommit({ AGENTBUS_AS: 'a//b' });
    expect([badName.ok, badName.stderr]).toEqual([true, expect.stringMatching(/could not check .*AGENTBUS_AS.*allowing the commit/)]);

    // Another process holds the database in exclusive locking mode (Alice's server gone, so it can take it): the guard gives up after a moment.
    await stopCleanly(alice);
    const { db: locker } = await openTestDatabase(dataDir);
    try {
      locker.exec('PRAGMA locking_mode = EXCLUSIVE');
      locker.exec('BEGIN EXCLUSIVE');
      locker.run('UPDATE channels SET created_seq = created_seq');
      const locked = stageAndCommit();
      expect(locked.ok).toBe(true);
      expect(locked.stderr).toMatch(/could not check file reservations \(DbError: .*locked.*\); allowing the commit/);
      locker.exec('ROLLBACK');
    } finally {
      locker.close();
    }

    // The installed agentbus moved away, or its Node did: one warning line (no stack trace), and the commit goes through.
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    const script = readFileSync(hook, 'utf8');
    writeFileSync(hook, script.replace(/'[^']*bin\/agentbus\.js'/, "'/nonexistent/agentbus.js'"));
    const vanished = stageAndCommit();
    expect(vanished.ok).toBe(true);
    expect(vanished.stderr).toMatch(/^agentbus guard: \/nonexistent\/agentbus\.js or .* is gone \(agentbus moved or removed\), file reservations not checked; allowing the commit \(.*\)\n$/);
    writeFileSync(hook, script.replace(/^node='[^']*'$/m, "node='/nonexistent/node'"));
    const noNode = stageAndCommit();
    expect([noNode.ok, noNode.stderr.split('\n')]).toEqual([true, [expect.stringMatching(/is gone .*allowing the commit/), '']]);
  });
});
