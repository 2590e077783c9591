import { describe, expect, it } from 'vitest';
import { VectorCache } from '../../src/embeddings/vector-cache.js';
import { encodeVector, normalizeVector } from '../../src/embeddings/vector-codec.js';

const blob = (values: number[]) => encodeVector(normalizeVector(values) as Float32Array);

describe('vector cache', () => {
  it('keeps private copies up to its byte cap, then decodes without keeping', () => {
    const cache = new VectorCache('m', 2 * 3 * 4);
    const source = blob([1, 2, 3]);
    const first = cache.add(1, source);
    source.fill(0);
    expect(Array.from(cache.get(1) ?? [])).toEqual(Array.from(first));
    expect(first.some((x) => x !== 0)).toBe(true);
    cache.add(2, blob([3, 2, 1]));
    const third = cache.add(3, blob([1, 1, 1]));
    expect(third).toHaveLength(3);
    expect(cache.size).toBe(2);
    expect(cache.get(3)).toBeUndefined();
  });

  it('prunes entries that are no longer candidates and frees their room', () => {
    const cache = new VectorCache('m', 2 * 3 * 4);
    cache.add(1, blob([1, 0, 0]));
    cache.add(2, blob([0, 1, 0]));
    cache.pruneTo(new Set([2]));
    expect(cache.get(1)).toBeUndefined();
    cache.add(3, blob([0, 0, 1]));
    expect(cache.size).toBe(2);
    expect(cache.get(3)).toBeDefined();
  });
});
