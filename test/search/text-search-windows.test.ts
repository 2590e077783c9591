/**
 * The text ranking's rules at scale: relevance within windows of the newest
 * TEXT_WINDOW matches, recency between windows and as the tie-break, a
 * continuation that pages across windows and ignores messages sent between
 * pages, and results that do not depend on how FTS5's segments are merged.
 */
import { describe, expect, it } from 'vitest';
import { search } from '../../src/bus/search.js';
import { TEXT_WINDOW } from '../../src/bus/search-text-window.js';
import { seqs, useTextSearchBus } from './text-search-bus.js';

const bus = useTextSearchBus();
const { bulk, post, allPages } = bus;

describe('text ranking windows', () => {
  it('ranks by relevance within a window: more occurrences and shorter messages first, the rarer word weighs more', async () => {
    const once = await post('kiwi note about lunch and other things of the day');
    const twice = await post('kiwi kiwi note');
    const short = await post('kiwi note');
    const ranked = seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'kiwi' }));
    expect(ranked).toEqual([twice, short, once]);
    // Two words: the filler makes "note" common; a message repeating the rare "fig" beats one repeating "note".
    bulk(Array.from({ length: 50 }, (_, i) => `note filler ${i}`));
    const rareTwice = await post('fig fig note plus');
    const commonTwice = await post('fig note note plus');
    expect(seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'fig note' }))).toEqual([rareTwice, commonTwice]);
  });

  it('breaks ties by recency: equally relevant messages come newest first', async () => {
    const same = [];
    for (let i = 0; i < 5; i++) same.push(await post('identical words here'));
    expect(seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'identical words' }))).toEqual([...same].reverse());
  });

  it('puts every match of a newer window before any older one, however relevant the older one is', async () => {
    const best = await post('melon melon melon melon');
    const newer = bulk(Array.from({ length: TEXT_WINDOW }, (_, i) => `melon and a long tail of other words number ${i}`));
    const first = await search(bus.fx.ctx, { as: bus.sam, query: 'melon', count: 10 });
    expect(seqs(first).every((s) => newer.includes(s))).toBe(true);
    const all = await allPages({ query: 'melon', count: 200 });
    expect(all.seqs.at(-1)).toBe(best);
    expect(all.seqs).toHaveLength(TEXT_WINDOW + 1);
  });

  it('pages across windows without repeats or gaps, each window before the next', async () => {
    const total = TEXT_WINDOW * 2 + 37;
    const made = bulk(Array.from({ length: total }, (_, i) => `grape ${'filler '.repeat(i % 7)}${i}`));
    const all = await allPages({ query: 'grape', count: 150 });
    expect([...all.seqs].sort((a, b) => a - b)).toEqual(made);
    const windows = [all.seqs.slice(0, TEXT_WINDOW), all.seqs.slice(TEXT_WINDOW, 2 * TEXT_WINDOW), all.seqs.slice(2 * TEXT_WINDOW)];
    for (let w = 1; w < windows.length; w++) expect(Math.max(...(windows[w] as number[]))).toBeLessThan(Math.min(...(windows[w - 1] as number[])));
    // Inside a window, best first.
    const scores = all.scores.slice(0, TEXT_WINDOW);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(all.pages).toBe(Math.ceil(total / 150));
    // A prefix reads each window in one statement (search-text-window.ts): the same windows, the same order.
    const prefixed = await allPages({ query: 'grap*', count: 150 });
    expect(prefixed.seqs).toEqual(all.seqs);
    expect(prefixed.scores).toEqual(all.scores);
  });

  it('keeps paging the same window when matching messages arrive between pages', async () => {
    const made = bulk(Array.from({ length: 60 }, (_, i) => `peach ${i}`));
    const first = await search(bus.fx.ctx, { as: bus.sam, query: 'peach', count: 25 });
    const arrived = await post('peach peach just arrived');
    const rest = await allPages({ query: 'peach', count: 25, continuation: first.continuation });
    const seen = [...seqs(first), ...rest.seqs];
    expect(seen).not.toContain(arrived);
    expect([...seen].sort((a, b) => a - b)).toEqual(made);
    expect(seqs(await search(bus.fx.ctx, { as: bus.sam, query: 'peach', count: 1 }))).toEqual([arrived]);
  });

});
