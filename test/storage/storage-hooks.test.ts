/**
 * The hooks and the commit guard never fail a harness or a commit because the
 * database cannot be used, and the guard says why in one line: real git
 * commits through the installed hook, real hook commands.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../../src/db/open/open-database.js';
import { prepareCliDir, runCli } from '../cli/cli-process.js';
import { git, gitRepo, personEnv, writeFiles } from '../reservations/git-repo.js';
import { tempDir } from '../support/test-driver.js';
import { usedBus } from '../support/used-bus.js';


const DAMAGE: Readonly<Record<string, (db: string) => void>> = {
  'emptied to 0 bytes': (db) => {
    truncateSync(db, 0);
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
  },
  'a garbage header': (db) => {
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(100, 0x5a), 0, 100, 0);
    closeSync(fd);
  },
};

describe('hooks and the commit guard over a database that cannot be used', () => {
  for (const [name, damage] of Object.entries(DAMAGE)) {
    it(`${name}: the guard allows the commit with one line naming the way out; identity and inbox --hook exit 0`, async () => {
      const repo = gitRepo();
      const dataDir = tempDir();
      prepareCliDir(dataDir);
      expect((await runCli(dataDir, ['guard', '--install'], { cwd: repo })).code).toBe(0);
      await usedBus(dataDir);
      damage(databasePath(dataDir));

      writeFiles(repo, { 'src/a.ts': 'x\n' });
      git(repo, ['add', '-A']);
      const before = git(repo, ['rev-parse', 'HEAD']);
      const env = { ...personEnv(), GIT_CONFIG_NOSYSTEM: '1', HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json') };
      const commit = spawnSync('git', ['commit', '-q', '-m', 'change'], { cwd: repo, encoding: 'utf8', env });
      expect(commit.status, commit.stderr).toBe(0);
      expect(git(repo, ['rev-parse', 'HEAD'])).not.toBe(before);
      const lines = commit.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(databasePath(dataDir));
      expect(lines[0]).toContain('agentbus reset');

      const identity = await runCli(dataDir, ['identity'], { cwd: repo });
      expect(identity.code).toBe(0);
      expect(identity.stdout).toMatch(/register/);
      const inbox = await runCli(dataDir, ['inbox', '--hook'], { cwd: repo, input: JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 's' }) });
      expect(inbox.code).toBe(0);
      expect(inbox.stdout).toBe('');
    });
  }
});
