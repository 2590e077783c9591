import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { jsonKeysAt } from '../support/json-at.js';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';
import { stopCleanly } from './clean-exit.js';
import { gitRepo } from './git-repo.js';
import { granted, listed, Refusal, refused, released, reserveAnswer } from './reservation-answers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `count` agentbus mcp processes on one bus, working in `repo`, each registered (Agent1, Agent2, ...). */
async function agents(dir: string, repo: string, count: number): Promise<McpProcess[]> {
  const procs = await Promise.all(Array.from({ length: count }, () => startMcp(dir, { cwd: repo })));
  for (const [i, p] of procs.entries()) expect((await p.call('register', { name: `Agent${i + 1}` })).display_name).toBe(`Agent${i + 1}`);
  return procs;
}

/** Runs `sql` on the bus database from the test, as an outside writer. */
async function onDatabase<T>(dir: string, fn: (db: Awaited<ReturnType<typeof openTestDatabase>>['db']) => T): Promise<T> {
  const { db } = await openTestDatabase(dir);
  try {
    return db.transaction(() => fn(db));
  } finally {
    db.close();
  }
}

describe('reservations between agentbus mcp processes', () => {
  it('lists reserve, release and list_reservations; the conflict error with its holders passes the client\'s outputSchema check', async () => {
    const repo = gitRepo();
    const [a, b] = await agents(tempDir(), repo, 2);
    const { tools } = await a!.client.listTools();
    const reserveTool = tools.find((t) => t.name === 'reserve');
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['reserve', 'release', 'list_reservations']));
    expect(Object.keys(reserveTool?.inputSchema.properties ?? {})).toEqual(['as', 'paths', 'exclusive', 'ttl_seconds', 'extend_seconds', 'reason', 'take_over', 'repository']);
    expect(jsonKeysAt(reserveTool?.outputSchema, 'anyOf', 1, 'properties', 'error', 'properties')).toEqual(['holders', 'code', 'message', 'retryable']);

    await a!.call('reserve', { as: 'Agent1', paths: ['src/cli/**'], reason: 'rewriting the CLI' });
    // callTool validates structuredContent against the outputSchema (it would throw on a mismatch).
    const refused = CallToolResultSchema.parse(await b!.client.callTool({ name: 'reserve', arguments: { as: 'Agent2', paths: ['src/cli/main.ts'] } }));
    expect(refused.isError).toBe(true);
    const { error } = toolAnswer(Refusal, refused.structuredContent, 'reserve');
    expect(error).toMatchObject({ code: 'conflict', retryable: false });
    expect(error.message).toMatch(/Agent1's exclusive reservation "src\/cli\/\*\*" \(reason: rewriting the CLI/);
    expect(error.holders).toEqual([
      {
        pattern: 'src/cli/**',
        display_name: 'Agent1',
        exclusive: true,
        reason: 'rewriting the CLI',
        reserved_at: expect.any(String),
        expires_at: expect.any(String),
        overlaps: ['src/cli/main.ts'],
      },
    ]);
    const [text] = refused.content;
    if (text?.type !== 'text') throw new Error(`the refusal's first content block is not text: ${JSON.stringify(refused.content)}`);
    expect(JSON.parse(text.text)).toEqual(refused.structuredContent);
  });

  it('two agents: overlapping refused, disjoint granted, released paths free at once for the other', async () => {
    const repo = gitRepo();
    const [a, b] = await agents(tempDir(), repo, 2);
    const mine = await granted(a!, { as: 'Agent1', paths: ['src/**', '*.md'], ttl_seconds: 600 });
    expect(mine.repository).toBe(`${repo}/.git`);
    expect((await granted(b!, { as: 'Agent2', paths: ['docs/**', 'test/**'] })).reservations).toHaveLength(2);
    expect((await refused(b!, { as: 'Agent2', paths: ['README.md'] })).error.code).toBe('conflict');
    expect((await granted(b!, { as: 'Agent2', paths: ['docs/README.md'] })).renewed).toEqual([]);

    const overlapping = await listed(b!, { as: 'Agent2', paths: ['README.md', 'src/app.ts'] });
    expect(overlapping.reservations.map((r) => [r.display_name, r.pattern, r.overlaps])).toEqual([
      ['Agent1', '*.md', ['README.md']],
      ['Agent1', 'src/**', ['src/app.ts']],
    ]);
    expect(await a!.call('release', { as: 'Agent1', paths: ['*.md'] })).toEqual({ repository: `${repo}/.git`, released: ['*.md'], not_held: [] });
    expect((await granted(b!, { as: 'Agent2', paths: ['README.md'] })).reservations).toHaveLength(1);
  });

  it('expiry: once the holder\'s ttl has passed, another process gets the paths without any release', async () => {
    const repo = gitRepo();
    const [a, b] = await agents(tempDir(), repo, 2);
    const held = await granted(a!, { as: 'Agent1', paths: ['src/**'], ttl_seconds: 3 });
    const expiresAt = Date.parse(held.reservations[0]!.expires_at);
    const early = await reserveAnswer(b!, { as: 'Agent2', paths: ['src/a.ts'] });
    // Under load the first call may itself land after the expiry; before it, it must be refused.
    if (Date.now() < expiresAt) expect('error' in early ? early.error.code : undefined).toBe('conflict');
    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    expect((await listed(b!, { as: 'Agent2' })).reservations.filter((r) => r.display_name === 'Agent1')).toEqual([]);
    expect((await granted(b!, { as: 'Agent2', paths: ['src/**'] })).reservations).toHaveLength(1);
  });

  it('renewal from the holder\'s process keeps the reservation time and moves the expiry; the other stays refused', async () => {
    const repo = gitRepo();
    const [a, b] = await agents(tempDir(), repo, 2);
    const first = (await granted(a!, { as: 'Agent1', paths: ['src/**'], ttl_seconds: 60 })).reservations[0]!;
    const again = await granted(a!, { as: 'Agent1', paths: ['src/**'], ttl_seconds: 7200 });
    expect(again.renewed).toEqual(['src/**']);
    const renewed = again.reservations[0]!;
    expect(renewed.reserved_at).toBe(first.reserved_at);
    expect(Date.parse(renewed.expires_at) - Date.parse(first.expires_at)).toBeGreaterThanOrEqual(7_140_000);
    const other = await refused(b!, { as: 'Agent2', paths: ['src/x.ts'] });
    expect(other.error.holders![0]!.expires_at).toBe(renewed.expires_at);
  });

  it('a clean exit of the holder ends its reservations at once', async () => {
    const repo = gitRepo();
    const [a, b] = await agents(tempDir(), repo, 2);
    await a!.call('reserve', { as: 'Agent1', paths: ['src/**'] });
    expect((await refused(b!, { as: 'Agent2', paths: ['src/a.ts'] })).error.code).toBe('conflict');
    await stopCleanly(a!);
    expect((await granted(b!, { as: 'Agent2', paths: ['src/a.ts'] })).reservations).toHaveLength(1);
  });

  it('crash of the holder (SIGKILL): its reservations end with its session, and its name and claims go to nobody else', async () => {
    const repo = gitRepo();
    const dir = tempDir();
    const [a, b] = await agents(dir, repo, 2);
    await a!.call('reserve', { as: 'Agent1', paths: ['src/**'], reason: 'mine' });
    process.kill(a!.transport.pid!, 'SIGKILL');
    await sleep(100);
    // A killed process releases nothing: its session row stays until it is no longer live.
    expect(await onDatabase(dir, (db) => db.all("SELECT sender FROM sessions WHERE sender = 'Agent1'"))).toHaveLength(1);
    // Its session ages past the expiry as the dead process's heartbeat stops (moved here rather than waited for).
    await onDatabase(dir, (db) => db.run("UPDATE sessions SET heartbeat = heartbeat - 60000 WHERE sender = 'Agent1'"));
    expect((await listed(b!, { as: 'Agent2' })).reservations).toEqual([]);
    expect((await granted(b!, { as: 'Agent2', paths: ['src/**'] })).reservations).toHaveLength(1);
    // A new process registering the dead agent's name gets the name, not the claim.
    const c = await startMcp(dir, { cwd: repo });
    expect((await c.call('register', { name: 'Agent1' })).display_name).toBe('Agent1');
    expect((await refused(c, { as: 'Agent1', paths: ['src/a.ts'] })).error.holders![0]!.display_name).toBe('Agent2');
  });

  it('4 processes racing for the same exclusive pattern: exactly one wins, the others are told who', async () => {
    const repo = gitRepo();
    const procs = await agents(tempDir(), repo, 4);
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(procs.map((p, i) => reserveAnswer(p, { as: `Agent${i + 1}`, paths: ['src/shared.ts'], reason: `round ${round}` })));
      const winners = results.flatMap((r, i) => ('error' in r ? [] : [`Agent${i + 1}`]));
      expect(winners, JSON.stringify(results)).toHaveLength(1);
      for (const r of results) {
        if (!('error' in r)) continue;
        expect(r.error.code).toBe('conflict');
        expect(r.error.holders?.map((h) => h.display_name)).toEqual(winners);
      }
      const winner = procs[Number(winners[0]!.slice('Agent'.length)) - 1]!;
      expect((await released(winner, { as: winners[0] })).released).toEqual(['src/shared.ts']);
    }
  });
});
