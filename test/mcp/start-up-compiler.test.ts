/**
 * `agentbus mcp` keeps V8's optimising compiler off while it starts and turns
 * it on again afterwards (src/mcp/start-up-compiler.ts). The second half is
 * what must never fail silently: a server left without it would run every
 * later tool call in V8's baseline tiers. These run a real Node child under
 * --trace-opt (on every Node the suite runs) and read what V8 optimised.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { holdOptimisingCompiler } from '../../src/mcp/start-up-compiler.js';
import { fixturePath } from '../support/child-process.js';

/** The child's stdout under --trace-opt: its own lines and V8's trace, in order. */
function traced(...ownFlags: string[]): string[] {
  const out = execFileSync(process.execPath, ['--trace-opt', fixturePath('compiler-hold-child.js'), ...ownFlags], { encoding: 'utf8' });
  return out.split('\n');
}

const optimised = (lines: readonly string[], fn: string): boolean => lines.some((l) => l.includes('completed optimizing') && l.includes(`<JSFunction ${fn} `));

describe('the optimising compiler during start-up', () => {
  it('is off while held: a hot function stays unoptimised until release, and one hot after it is optimised', () => {
    const lines = traced();
    const released = lines.indexOf('released false');
    expect(lines).toContain('held true');
    expect(released).toBeGreaterThan(0);
    expect(optimised(lines.slice(0, released), 'duringStartUp')).toBe(false);
    expect(optimised(lines.slice(released), 'afterStartUp')).toBe(true);
  });

  it('is left alone when the process was started with its own choice of V8 tiers', () => {
    const lines = traced('--max-opt=3');
    expect(lines).toContain('held false');
    // Not held, so V8 optimises as it always would, before the release too.
    expect(optimised(lines.slice(0, lines.indexOf('released false')), 'duringStartUp')).toBe(true);
  });

  it('sets no flag for a process with its own tiering flags, in execArgv or NODE_OPTIONS, and turns the compiler on once', () => {
    const set: string[] = [];
    const record = (flags: string): void => void set.push(flags);
    for (const own of [{ execArgv: ['--jitless'], nodeOptions: undefined }, { execArgv: [], nodeOptions: '--max-old-space-size=512 --no-opt' }]) {
      const hold = holdOptimisingCompiler({ ...own, setFlags: record });
      hold.release();
      expect(hold.held).toBe(false);
    }
    expect(set).toEqual([]);
    const hold = holdOptimisingCompiler({ execArgv: ['--no-experimental-sqlite'], nodeOptions: '--max-old-space-size=512', setFlags: record });
    expect(hold.held).toBe(true);
    hold.release();
    hold.release();
    expect(set).toEqual(['--no-turbofan', '--turbofan']);
  });
});
