/**
 * Text ranking across the tick's merge of FTS5 index segments: results do
 * not depend on how the segments are merged. SQLite file only (split from
 * text-search-windows.test.ts; test/postgres/not-on-postgres.ts).
 */
import { describe, expect, it } from 'vitest';
import { initialChunkState } from '../../src/maintenance/chunks.js';
import { mergeFtsOnce } from '../../src/maintenance/fts-merge.js';
import { emptyStep } from '../../src/maintenance/step-report.js';
import { useTextSearchBus } from './text-search-bus.js';

const bus = useTextSearchBus();
const { bulk, allPages } = bus;

describe('text ranking windows', () => {
  it('returns the same results before and after the tick merges the index segments', async () => {
    // Small transactions with automerge off (migration 0002) leave one segment each.
    for (let i = 0; i < 40; i++) bulk(Array.from({ length: 30 }, (_, j) => `plum ${j % 3 === 0 ? 'cherry ' : ''}batch ${i} row ${j}`));
    const queries = [{ query: 'plum', count: 300 }, { query: 'plum cherry', count: 100 }, { query: '"plum cherry"', count: 100 }, { query: 'batch*', count: 500 }];
    const before = [];
    for (const q of queries) before.push(await allPages(q));
    const state = initialChunkState();
    const report = emptyStep('fts_merge');
    while (mergeFtsOnce(bus.fx.ctx.db, 'all', state, report));
    expect(report.ftsMerges).toBeGreaterThan(1);
    for (const [i, q] of queries.entries()) expect(await allPages(q)).toEqual(before[i]);
  });
});
