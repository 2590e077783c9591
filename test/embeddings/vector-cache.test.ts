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
});
