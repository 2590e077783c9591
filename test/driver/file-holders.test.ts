/**
 * Who holds a database: registry entries of agentbus connections (any
 * platform), open files through /proc and through lsof (what non-Linux
 * systems use), and dead or foreign owners judged as process-identity says.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { surveyHolders } from '../../src/db/lock-records/file-holders.js';
import { databasePath } from '../../src/db/open/open-database.js';
import { openerRegistryDir } from '../../src/db/lock-records/opener-registry.js';
import { procAvailable, processesHolding } from '../../src/db/processes/open-files.js';
import { currentProcess, formatProcessIdentity } from '../../src/db/processes/process-identity.js';
import { startFixture, waitForExit, waitForLine } from '../support/child-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { spawnSync } from 'node:child_process';

/** A pid above Linux's pid_max (2^22): no process can have it. */
const DEAD_PID = 4_194_305;

const lsofInstalled = spawnSync('lsof', ['-v'], { encoding: 'utf8' }).error === undefined;

describe('who holds a database', () => {
  it('every open connection has a registry entry, removed when it closes', async () => {
    const dir = tempDir();
    const path = databasePath(dir);
    const a = await openTestDatabase(dir);
    const b = await openTestDatabase(dir);
    const entries = readdirSync(openerRegistryDir(path));
    expect(entries).toHaveLength(2);
    for (const name of entries) expect(name.startsWith(`${formatProcessIdentity(currentProcess())}#`)).toBe(true);
    const mine = surveyHolders(path).holders;
    expect(mine).toHaveLength(1);
    // A portable-protocol connection also holds a record in the lock table.
    const portable = a.db.capabilities.lockProtocol === 'portable';
    expect(mine[0]).toMatchObject({ owner: { pid: process.pid }, seenAs: portable ? ['registered', 'lock table'] : ['registered'] });
    a.db.close();
    expect(readdirSync(openerRegistryDir(path))).toHaveLength(1);
    b.db.close();
    expect(surveyHolders(path).holders).toEqual([]);
    // The last closer removes the empty registry directory.
    expect(readdirSync(dir)).not.toContain('agentbus.db.openers');
  });

  it('finds another process by its registry entry and its open file, through /proc and through lsof', async () => {
    const dir = tempDir();
    (await openTestDatabase(dir)).db.close();
    const path = databasePath(dir);
    const holder = startFixture('db-child.js', ['hold', dir, '30000']);
    await waitForLine(holder, 'locked');
    try {
      const { holders, openFilesChecked } = surveyHolders(path);
      expect(openFilesChecked).toBe(procAvailable() || lsofInstalled);
      expect(holders).toHaveLength(1);
      expect(holders[0]?.owner.pid).toBe(holder.pid);
      expect(holders[0]?.seenAs).toContain('registered');
      expect(holders[0]?.command).toContain('db-child.js');
      if (procAvailable()) {
        expect(processesHolding([path], 'proc')?.map((h) => h.pid)).toEqual([holder.pid]);
        expect(holders[0]?.seenAs).toContain('open file');
      }
      // The way macOS and the BSDs look, checked wherever lsof is installed.
      if (lsofInstalled) {
        expect(processesHolding([path, `${path}-wal`], 'lsof')?.map((h) => h.pid)).toEqual([holder.pid]);
        expect(surveyHolders(path, 'lsof').holders.map((h) => h.owner.pid)).toEqual([holder.pid]);
      }
    } finally {
      holder.kill('SIGKILL');
      await waitForExit(holder);
    }
    // Killed: its entry remains, but its owner is certainly dead, so it holds nothing (and is pruned).
    expect(surveyHolders(path).holders).toEqual([]);
    expect(readdirSync(openerRegistryDir(path))).toEqual([]);
  });

  it('ignores an entry of a dead owner, and counts one from another pid namespace as a holder', async () => {
    const dir = tempDir();
    (await openTestDatabase(dir)).db.close();
    const path = databasePath(dir);
    const registry = openerRegistryDir(path);
    mkdirSync(registry, { recursive: true });
    const realm = currentProcess().realm;
    writeFileSync(join(registry, `${formatProcessIdentity({ pid: DEAD_PID, startTime: 1, realm })}#1`), '{"protocol":"posix","command":"gone"}');
    expect(surveyHolders(path).holders).toEqual([]);
    const foreign = { boot: realm?.boot ?? 'host:x', pidNamespace: (realm?.pidNamespace ?? 0) + 1 };
    writeFileSync(join(registry, `${formatProcessIdentity({ pid: 7, startTime: 1, realm: foreign })}#1`), '{"protocol":"posix","command":"node agentbus mcp"}');
    const { holders } = surveyHolders(path);
    expect(holders).toHaveLength(1);
    expect(holders[0]).toMatchObject({ owner: { pid: 7 }, command: 'node agentbus mcp', seenAs: ['registered'] });
  });
});
