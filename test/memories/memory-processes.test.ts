import { describe, expect, it } from 'vitest';
import type { EditMemoryResult } from '../../src/bus/memories.js';
import { getMemory } from '../../src/bus/memories.js';
import { send } from '../../src/bus/send.js';
import { runFixture } from '../support/child-process.js';
import { busFixture, channel, registerAs } from '../support/bus.js';
import { revisions } from '../support/rows.js';
import { testDriverEnv } from '../support/test-driver.js';

describe('memory edits across processes', () => {
  it('serializes concurrent edits from several processes: every revision replaced exactly once, one live', async () => {
    const fx = await busFixture();
    const sam = registerAs(fx.ctx, 'Sam');
    channel(fx.ctx, sam, 'notes', 'memory');
    const id = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'v1' })).memory_id as number;
    const dir = fx.ctx.config.data_directory;

    const children = await Promise.all(
      ['Ann', 'Bob', 'Cat'].map((name) => runFixture('edit-child.js', [dir, String(id), '25', name], testDriverEnv(dir))),
    );
    const results: EditMemoryResult[] = [];
    for (const child of children) {
      expect(child.code, child.stderr).toBe(0);
      results.push(...(JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as EditMemoryResult[]));
    }
    expect(results).toHaveLength(75);
    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 75 }, (_, i) => i + 2));
    expect(results.map((r) => r.replaced_revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 75 }, (_, i) => i + 1));

    const rows = revisions(fx.ctx, id);
    expect(rows).toHaveLength(76);
    expect(rows.filter((r) => r.tombstone === 0).map((r) => r.revision)).toEqual([76]);
    const last = results.find((r) => r.revision === 76);
    expect(getMemory(fx.ctx, { as: sam, memory_id: id }).seq).toBe(last?.seq);
    await fx.close();
  });
});
