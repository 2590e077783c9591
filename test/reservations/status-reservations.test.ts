import { describe, expect, it } from 'vitest';
import { jsonOf, runCli } from '../cli/cli-process.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { stopCleanly } from './clean-exit.js';
import { gitRepo } from './git-repo.js';

describe('agentbus status: live file reservations', () => {
  it('lists live reservations with repository, pattern, holder, mode, expiry and reason, as JSON and as text; ended ones are gone', async () => {
    const dir = tempDir();
    const repo = gitRepo();
    const server = await startMcp(dir, { cwd: repo });
    await server.call('register', { name: 'Alice' });
    await server.call('reserve', { as: 'Alice', paths: ['src/cli/**'], reason: 'rewriting the CLI' });
    await server.call('reserve', { as: 'Alice', paths: ['docs/**'], exclusive: false });
    await server.call('reserve', { as: 'Alice', paths: ['tmp/**'] });
    await server.call('release', { as: 'Alice', paths: ['tmp/**'] });

    const run = await runCli(dir, ['status', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf(run).reservations).toEqual([
      { repository: `${repo}/.git`, pattern: 'docs/**', display_name: 'Alice', exclusive: false, reason: null, expires_at: expect.any(String) },
      { repository: `${repo}/.git`, pattern: 'src/cli/**', display_name: 'Alice', exclusive: true, reason: 'rewriting the CLI', expires_at: expect.any(String) },
    ]);
    const text = await runCli(dir, ['status']);
    expect(text.stdout).toMatch(/reservations +2 live/);
    expect(text.stdout).toContain(`${repo}  src/cli/**  Alice  exclusive  expires in `);
    expect(text.stdout).toMatch(/src\/cli\/\*\* +Alice +exclusive +expires in (59|60)m: rewriting the CLI\n/);
    expect(text.stdout).toMatch(/docs\/\*\* +Alice +shared +expires in (59|60)m\n/);

    await stopCleanly(server);
    const after = await runCli(dir, ['status', '--json']);
    expect(jsonOf(after).reservations).toEqual([]);
  });
});
