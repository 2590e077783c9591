/**
 * Taking over a stalled holder's reservations (issue 29): `reserve` with
 * `take_over: true`. Real processes: the stalled holder is an `agentbus mcp`
 * stopped with SIGSTOP (alive, so its claims outlive its silence), its last
 * heartbeat moved back past the bound by an outside writer while it cannot beat.
 */
import { describe, expect, it } from 'vitest';
import { TAKEOVER_STALL_MS } from '../../src/bus/reservations-takeover.js';
import { systemClock } from '../../src/clock.js';
import { jsonOf, runCli } from '../cli/cli-process.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { gitRepo } from './git-repo.js';
import { granted, listed, refused } from './reservation-answers.js';

async function named(dir: string, repo: string, name: string): Promise<McpProcess> {
  const p = await startMcp(dir, { cwd: repo });
  expect((await p.call('register', { name })).display_name).toBe(name);
  return p;
}

/** Moves `sender`'s last heartbeat `ms` into the past on the monotonic clock, as if it had not beaten since. */
async function ageHeartbeat(dir: string, sender: string, ms: number): Promise<void> {
  const { db } = await openTestDatabase(dir);
  try {
    db.transaction(() => db.run('UPDATE sessions SET heartbeat_mono = ? WHERE sender = ?', [systemClock.monotonic() - ms, sender]));
  } finally {
    db.close();
  }
}

describe('taking over a stalled claim', () => {
  it('a live, active holder never loses a claim; a stalled one does, is told in its next receive, and the takeover shows in list_reservations and status', async () => {
    const dir = tempDir();
    const repo = gitRepo();
    const alice = await named(dir, repo, 'Alice');
    const bob = await named(dir, repo, 'Bob');
    await granted(bob, { as: 'Bob', paths: ['src/**'], reason: 'refactor' });

    // Bob is running and beating: take_over is refused, and nothing changes.
    const active = await refused(alice, { as: 'Alice', paths: ['src/a.ts'], take_over: true });
    expect([active.error.code, active.error.holders?.map((h) => h.display_name)]).toEqual(['conflict', ['Bob']]);
    // Stalled for less than the bound: still refused.
    const pid = bob.transport.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      await ageHeartbeat(dir, 'Bob', TAKEOVER_STALL_MS - 60_000);
      expect((await refused(alice, { as: 'Alice', paths: ['src/a.ts'], take_over: true })).error.code).toBe('conflict');
      await ageHeartbeat(dir, 'Bob', TAKEOVER_STALL_MS + 60_000);
      // Without take_over a stalled holder's claim still refuses.
      expect((await refused(alice, { as: 'Alice', paths: ['src/a.ts'] })).error.code).toBe('conflict');
      const took = await granted(alice, { as: 'Alice', paths: ['src/a.ts'], take_over: true });
      expect(took.reservations.map((r) => [r.pattern, r.display_name, r.taken_from])).toEqual([['src/a.ts', 'Alice', 'Bob']]);
      const list = await listed(alice, { as: 'Alice' });
      expect(list.reservations.map((r) => [r.pattern, r.display_name, r.taken_from])).toEqual([['src/a.ts', 'Alice', 'Bob']]);
      const status = jsonOf(await runCli(dir, ['status', '--json']));
      expect(status.reservations.map((r: Record<string, unknown>) => [r.pattern, r.taken_from])).toEqual([['src/a.ts', 'Bob']]);
      expect((await runCli(dir, ['status'])).stdout).toMatch(/src\/a\.ts +Alice +exclusive +expires .*, taken over from Bob/);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Bob, running again, hears of it once, in his next receive.
    const first = (await bob.call('receive', { as: 'Bob' })) as { notices: { kind: string }[] };
    expect(first.notices.map((n) => n.kind)).toEqual(['reservation_taken']);
    const second = (await bob.call('receive', { as: 'Bob' })) as { notices: { kind: string }[] };
    expect(second.notices).toEqual([]);
    // His claim is gone, not revived: he reserves again and now conflicts with Alice.
    expect((await refused(bob, { as: 'Bob', paths: ['src/**'] })).error.code).toBe('conflict');
  });
});
