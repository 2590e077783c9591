/**
 * Direct messages for people on the command line (issue 22, item 5):
 * `agentbus post --to`, `agentbus tail` marking and filtering them, and
 * `agentbus search --direct`, against real `agentbus mcp` servers.
 */
import { describe, expect, it } from 'vitest';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { startCli } from '../cli/cli-follow.js';
import { jsonOf, runCli } from '../cli/cli-process.js';

type Json = Record<string, any>;

/** Kim and Lee, each in a server of its own; Lee listens on general. */
async function agents(dir: string): Promise<{ kim: McpProcess; lee: McpProcess }> {
  const kim = await startMcp(dir);
  const lee = await startMcp(dir);
  await kim.call('register', { name: 'Kim' });
  await lee.call('register', { name: 'Lee' });
  await lee.call('subscribe', { as: 'Lee', channel: 'general' });
  return { kim, lee };
}

const count = async (dir: string): Promise<number> => (await runCli(dir, ['tail', '--once', '--json'])).stdout.trim().split('\n').filter((l) => l !== '').length;

describe('direct messages on the command line', () => {
  it('post --to sends a direct message only its addressees receive; a name never registered is refused and stores nothing', async () => {
    const dir = tempDir();
    const { kim, lee } = await agents(dir);
    const run = await runCli(dir, ['post', '--to', 'Kim', 'run the tests on your branch', '--as', 'Dana', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf(run)).toEqual({ seq: expect.any(Number), as: 'Dana', to: ['Kim'] });
    const text = await runCli(dir, ['post', '--to', 'Kim', '--to', 'Lee', 'to you both', '--as', 'Dana']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^sent \d+ to Kim, Lee \(direct\) as Dana\n$/);

    const got = (await kim.call('receive', { as: 'Kim' })) as Json;
    expect(got.messages.map((m: Json) => [m.sender, m.content, m.direct, m.to])).toEqual([
      ['Dana', 'run the tests on your branch', true, ['Kim']],
      ['Dana', 'to you both', true, ['Kim', 'Lee']],
    ]);
    // Lee, subscribed to general, gets only the one addressed to Lee too.
    expect(((await lee.call('receive', { as: 'Lee' })) as Json).messages.map((m: Json) => m.content)).toEqual(['to you both']);

    const before = await count(dir);
    const typo = await runCli(dir, ['post', '--to', 'Kin', 'lost?', '--as', 'Dana']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('Kim');
    const both = await runCli(dir, ['post', 'general', 'hello', '--to', 'Kim', '--as', 'Dana']);
    expect(both.code).toBe(2);
    const none = await runCli(dir, ['post', '--to', 'Kim', '--as', 'Dana'], { input: '' });
    expect(none.code).toBe(2);
    expect(await count(dir)).toBe(before);
  });

  it('tail marks direct messages with their addressees and filters them with --direct and --to', async () => {
    const dir = tempDir();
    const { kim } = await agents(dir);
    await kim.call('send', { as: 'Kim', channel: 'general', content: 'on the channel' });
    const { seq } = (await kim.call('send', { as: 'Kim', to: ['Lee'], content: 'just for Lee' })) as Json;
    await runCli(dir, ['post', '--to', 'Kim', 'for Kim', '--as', 'Dana']);

    const all = await runCli(dir, ['tail', '--once']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/#general \[\d+\] Kim\n    on the channel/);
    expect(all.stdout).toContain(`direct → Lee [${seq}] Kim\n    just for Lee`);
    expect(all.stdout).toMatch(/direct → Kim \[\d+\] Dana\n    for Kim/);

    const direct = await runCli(dir, ['tail', '--once', '--direct', '--json']);
    expect(direct.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json).map((m) => [m.content, m.direct, m.to])).toEqual([
      ['just for Lee', true, ['Lee']],
      ['for Kim', true, ['Kim']],
    ]);
    const toLee = await runCli(dir, ['tail', '--once', '--to', 'Lee', '--json']);
    expect(toLee.stdout.trim().split('\n').map((l) => (JSON.parse(l) as Json).content)).toEqual(['just for Lee']);

    expect((await runCli(dir, ['tail', '--once', '--to', 'Leo'])).code).toBe(1);
    expect((await runCli(dir, ['tail', '--once', '--direct', 'general'])).code).toBe(2);
  });

  it('tail follows a direct message as it commits', async () => {
    const dir = tempDir();
    const { kim } = await agents(dir);
    await kim.call('send', { as: 'Kim', to: ['Lee'], content: 'before the tail' });
    const follow = startCli(dir, ['tail', '--to', 'Lee', '--json']);
    await follow.waitFor(/before the tail/);
    await kim.call('send', { as: 'Kim', channel: 'general', content: 'not shown' });
    await kim.call('send', { as: 'Kim', to: ['Lee'], content: 'shown live' });
    await follow.waitFor(/shown live/);
    const lines = follow.stdout().trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(lines.map((m) => [m.content, m.direct, m.to, m.sender])).toEqual([
      ['before the tail', true, ['Lee'], 'Kim'],
      ['shown live', true, ['Lee'], 'Kim'],
    ]);
    expect(await follow.stop()).toBe(0);
  });

  it('search --direct finds only direct messages, a person sees every one; direct with channel is refused', async () => {
    const dir = tempDir();
    const { kim } = await agents(dir);
    await kim.call('send', { as: 'Kim', channel: 'general', content: 'flaky test on general' });
    await kim.call('send', { as: 'Kim', to: ['Lee'], content: 'flaky test, just for Lee' });
    const all = jsonOf(await runCli(dir, ['search', 'flaky', '--json']));
    expect((all.results as Json[]).map((r) => r.content).sort()).toEqual(['flaky test on general', 'flaky test, just for Lee']);
    const direct = jsonOf(await runCli(dir, ['search', 'flaky', '--direct', '--json']));
    expect((direct.results as Json[]).map((r) => [r.content, r.to])).toEqual([['flaky test, just for Lee', ['Lee']]]);
    const both = await runCli(dir, ['search', 'flaky', '--direct', '--channel', 'general']);
    expect(both.code).toBe(2);
    // The search tool has the same filter: Kim (the sender) finds it, an outsider does not.
    expect(((await kim.call('search', { as: 'Kim', query: 'flaky', direct: true })) as Json).results).toHaveLength(1);
    const other = await startMcp(dir);
    await other.call('register', { name: 'Max' });
    expect(((await other.call('search', { as: 'Max', query: 'flaky', direct: true })) as Json).results).toEqual([]);
  });
});
