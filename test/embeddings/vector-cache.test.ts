import { describe, expect, it } from 'vitest';
import { VectorCache } from '../../src/embeddings/vector-cache.js';
import { encodeVector, normalizeVector } from '../../src/embeddings/vector-codec.js';

const unit = (values: number[]) => normalizeVector(values) as Float32Array;
const row = (seq: number, values: number[]) => ({ seq, vector: encodeVector(unit(values)) });

describe('vector cache (one bit per dimension)', () => {
  it('codes each dimension against the center of the first vectors, so the shared direction does not drown the rest', () => {
    const cache = new VectorCache('m');
    // Every vector shares a large first component, as real embeddings share a direction.
    cache.addAll([row(1, [10, 1, 0, 0]), row(2, [10, 0, 1, 0]), row(3, [10, 0, 0, 1]), row(4, [10, -1, -1, -1])]);
    expect(cache.size).toBe(4);
    expect(cache.dimensions).toBe(4);
    const code = cache.queryCode(unit([10, 1, 0, 0])) as Uint32Array;
    expect(cache.distance(1, code)).toBe(0);
    expect(cache.distance(2, code)).toBeGreaterThan(0);
    expect(cache.distance(9, code)).toBeUndefined();
    expect(cache.queryCode(unit([1, 2, 3]))).toBeUndefined();
  });

  it('skips vectors of another dimension and stops at its cap', () => {
    const cache = new VectorCache('m', 2);
    cache.addAll([row(1, [1, 0, 0]), row(2, [1, 2]), row(3, [0, 1, 0]), row(4, [0, 0, 1])]);
    expect(cache.size).toBe(2);
    expect(cache.has(2)).toBe(false);
    expect(cache.has(4)).toBe(false);
  });

  it('prunes entries that are no longer candidates and keeps the others\' codes', () => {
    const cache = new VectorCache('m', 2);
    cache.addAll([row(1, [1, 0, 0]), row(2, [0, 1, 0])]);
    const code = cache.queryCode(unit([0, 1, 0])) as Uint32Array;
    const before = cache.distance(2, code);
    cache.pruneTo(new Set([2]));
    expect(cache.has(1)).toBe(false);
    expect(cache.distance(2, code)).toBe(before);
    cache.addAll([row(3, [0, 0, 1])]);
    expect(cache.size).toBe(2);
    expect(cache.has(3)).toBe(true);
  });

  it('keeps the slot list of one seq array until a slot moves, and marks uncached seqs -1', () => {
    const cache = new VectorCache('m');
    cache.addAll([row(1, [1, 0, 0]), row(2, [0, 1, 0])]);
    const seqs = [2, 7, 1];
    const slots = cache.slotsOf(seqs);
    expect([...slots].map((s) => s >= 0)).toEqual([true, false, true]);
    expect(cache.slotsOf(seqs)).toBe(slots);
    expect(cache.slotsOf([...seqs])).not.toBe(slots);
    cache.addAll([row(7, [0, 0, 1])]);
    const after = cache.slotsOf(seqs);
    expect(after).not.toBe(slots);
    expect([...after].every((s) => s >= 0)).toBe(true);
    cache.pruneTo(new Set([1, 7]));
    expect([...cache.slotsOf(seqs)].map((s) => s >= 0)).toEqual([false, true, true]);
  });

  it('selects the nearest codes by Hamming distance, ties to the earlier index, and always the uncached', () => {
    const cache = new VectorCache('m');
    // Around a center of zero in the last three dimensions: each vector's sign pattern is its code.
    const vectors: [number, number[]][] = [
      [1, [1, 1, 1, 1]],
      [2, [1, 1, 1, -1]],
      [3, [1, 1, -1, -1]],
      [4, [1, -1, -1, -1]],
      [5, [1, 1, 1, -1]],
    ];
    cache.addAll(vectors.map(([seq, values]) => row(seq, values)));
    const seqs = [4, 3, 9, 2, 5, 1];
    const slots = cache.slotsOf(seqs);
    const code = cache.queryCode(unit([1, 1, 1, 1])) as Uint32Array;
    const distances = seqs.map((seq) => cache.distance(seq, code));
    const picked = (wanted: number) => cache.nearest(slots, code, wanted).map((i) => seqs[i]);
    // seq 9 has no code: always a candidate; then the nearest, equal distances in index order.
    const byDistance = [1, 2, 5, 3, 4].sort((a, b) => (distances[seqs.indexOf(a)] as number) - (distances[seqs.indexOf(b)] as number) || seqs.indexOf(a) - seqs.indexOf(b));
    for (let wanted = 1; wanted <= 5; wanted++) {
      const want = new Set([9, ...byDistance.slice(0, wanted)]);
      expect(new Set(picked(wanted))).toEqual(want);
    }
    expect(picked(10).length).toBe(6);
  });

  it('scores by int8 copy within 0.01 of the exact dot product', () => {
    const cache = new VectorCache('m');
    const values = Array.from({ length: 64 }, (_, i) => Math.sin(i * 1.7) + 0.3);
    cache.addAll([row(1, values), row(2, values.map((x, i) => (i % 3 === 0 ? -x : x)))]);
    const query = unit(values.map((x, i) => x + Math.cos(i)));
    const [slot] = cache.slotsOf([1]);
    const exact = unit(values).reduce((sum, x, i) => sum + x * (query[i] as number), 0);
    expect(Math.abs(cache.approximateScoreAt(slot as number, query) - exact)).toBeLessThan(0.01);
    expect(cache.approximateScore(1, query)).toBe(cache.approximateScoreAt(slot as number, query));
  });
});
