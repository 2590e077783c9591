import { describe, expect, it } from 'vitest';
import { rankByDotProduct } from '../../src/embeddings/ranking.js';
import { reciprocalRankFusion } from '../../src/embeddings/reciprocal-rank-fusion.js';
import { decodeVector, encodeVector, normalizeVector, vectorDimensions } from '../../src/embeddings/vector-codec.js';

describe('vector codec', () => {
  it('normalizes to unit length and refuses zero or non-finite vectors', () => {
    const unit = normalizeVector([3, 4]);
    expect(Array.from(unit ?? [])).toEqual([0.6000000238418579, 0.800000011920929]);
    expect(normalizeVector([0, 0, 0])).toBeUndefined();
    expect(normalizeVector([1, Number.NaN])).toBeUndefined();
    expect(normalizeVector([1, Number.POSITIVE_INFINITY])).toBeUndefined();
    expect(normalizeVector([])).toBeUndefined();
  });

  it('stores little-endian float32 and reads it back, aligned or not', () => {
    const vector = normalizeVector([1, -2, 3, 0.5]) as Float32Array;
    const blob = encodeVector(vector);
    expect(blob.byteLength).toBe(16);
    expect(vectorDimensions(blob)).toBe(4);
    expect(new DataView(blob.buffer, blob.byteOffset).getFloat32(4, true)).toBe(vector[1]);
    expect(Array.from(decodeVector(blob))).toEqual(Array.from(vector));
    const shifted = new Uint8Array(17);
    shifted.set(blob, 1);
    expect(Array.from(decodeVector(shifted.subarray(1)))).toEqual(Array.from(vector));
    expect(vectorDimensions(new Uint8Array(7))).toBeUndefined();
  });
});

describe('ranking', () => {
  const blob = (values: number[]) => encodeVector(normalizeVector(values) as Float32Array);

  it('orders by cosine similarity, newer first on ties, skipping other dimensions', () => {
    const query = normalizeVector([1, 0]) as Float32Array;
    const ranked = rankByDotProduct(query, [
      { seq: 1, vector: blob([0, 1]) },
      { seq: 2, vector: blob([1, 1]) },
      { seq: 3, vector: blob([1, 0]) },
      { seq: 4, vector: blob([1, 1]) },
      { seq: 5, vector: blob([1, 0, 0]) },
    ]);
    expect(ranked.map((r) => r.seq)).toEqual([3, 4, 2, 1]);
    expect(ranked[0]?.score).toBeCloseTo(1, 6);
    expect(ranked[3]?.score).toBeCloseTo(0, 6);
  });

  it('fuses rankings by reciprocal rank with k = 60', () => {
    const fused = reciprocalRankFusion([
      [
        { seq: 10, score: 9 },
        { seq: 20, score: 5 },
      ],
      [
        { seq: 20, score: 0.9 },
        { seq: 30, score: 0.5 },
      ],
    ]);
    expect(fused.map((r) => r.seq)).toEqual([20, 10, 30]);
    expect(fused[0]?.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[1]?.score).toBeCloseTo(1 / 61, 12);
    expect(fused[2]?.score).toBeCloseTo(1 / 62, 12);
  });
});
