import { describe, expect, it } from 'vitest';
import { loadDriver } from '../../src/db/open/select-driver.js';
import { runFixture } from '../support/child-process.js';
import { tempDir } from '../support/test-driver.js';

function nodeAtLeast(major: number, minor: number): boolean {
  const [a, b] = process.versions.node.split('.').map(Number) as [number, number];
  return a > major || (a === major && b >= minor);
}

describe('driver selection', () => {
  it('reports native as unavailable, with the Node version it needs, where node:sqlite is missing', async () => {
    const result = await loadDriver('native');
    if (nodeAtLeast(22, 13)) {
      expect(result.ok).toBe(true);
    } else {
      expect(result.ok).toBe(false);
      expect(result.ok ? '' : result.reason).toContain('22.13');
    }
  });

  it('opens without printing an ExperimentalWarning on stderr', async () => {
    const r = await runFixture('db-child.js', ['write', tempDir(), '1', 'x']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
