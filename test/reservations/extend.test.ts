/** `reserve` with `extend_seconds` (issue 29): renewing by an amount, from the later of now and the current expiry. */
import { describe, expect, it } from 'vitest';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { gitRepo } from './git-repo.js';
import { granted, listed, refused } from './reservation-answers.js';

const ends = (r: { expires_at: string }) => Date.parse(r.expires_at);

describe('reserve with extend_seconds', () => {
  it('adds to the current expiry, or to now for a new pattern; refuses with ttl_seconds, beyond 24 h, and bad values, changing nothing', async () => {
    const repo = gitRepo();
    const a = await startMcp(tempDir(), { cwd: repo });
    await a.call('register', { name: 'Ann' });
    const tool = (await a.client.listTools()).tools.find((t) => t.name === 'reserve');
    expect(tool?.description).toContain('extend_seconds');
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toContain('extend_seconds');

    const first = ends((await granted(a, { as: 'Ann', paths: ['src/**'], ttl_seconds: 100 })).reservations[0]!);
    const extended = await granted(a, { as: 'Ann', paths: ['src/**', 'docs/**'], extend_seconds: 50 });
    expect(extended.renewed).toEqual(['src/**']);
    const [src, docs] = [extended.reservations.find((r) => r.pattern === 'src/**')!, extended.reservations.find((r) => r.pattern === 'docs/**')!];
    expect(Math.abs(ends(src) - (first + 50_000))).toBeLessThan(1000);
    expect(Math.abs(ends(docs) - (Date.now() + 50_000))).toBeLessThan(2000);
    const again = ends((await granted(a, { as: 'Ann', paths: ['src/**'], extend_seconds: 60 })).reservations[0]!);
    expect(Math.abs(again - (first + 110_000))).toBeLessThan(1000);

    const both = await refused(a, { as: 'Ann', paths: ['src/**'], ttl_seconds: 10, extend_seconds: 10 });
    expect(both.error.code).toBe('validation');
    const tooFar = await refused(a, { as: 'Ann', paths: ['src/**'], extend_seconds: 86_400 });
    expect(tooFar.error.code).toBe('validation');
    for (const bad of [0, 1.5, '60', 86_401, -5]) {
      const no = await refused(a, { as: 'Ann', paths: ['src/**'], extend_seconds: bad });
      expect(no.error.code).toBe('validation');
    }
    const now = (await listed(a, { as: 'Ann', paths: ['src/**'] })).reservations.find((r) => r.pattern === 'src/**')!;
    expect(Math.abs(ends(now) - again)).toBeLessThan(1000);
  });
});
