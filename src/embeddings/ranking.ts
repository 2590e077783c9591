/**
 * The order every ranking shares (best score first, the newer row on a tie),
 * and the exact brute-force ranking by dot product that the one-bit and int8
 * passes of semantic search (search.ts, vector-cache.ts) approximate:
 * scripts/bench-scale.js measures their recall@10 against it.
 */
import { decodeVector, dot } from './vector-codec.js';

export interface VectorCandidate {
  /** The message row the vector belongs to. */
  readonly seq: number;
  /** The stored BLOB (normalized little-endian float32). */
  readonly vector: Uint8Array;
}

export interface Ranked {
  /** The message row. */
  readonly seq: number;
  /** Higher is better; for vectors the cosine similarity in [-1, 1]. */
  readonly score: number;
}

/**
 * Candidates ordered by similarity to `query`, best first; ties go to the
 * newer row. Candidates whose dimension differs from the query's are skipped
 * (they were embedded by another model and await re-embedding).
 */
export function rankByDotProduct(query: Float32Array, candidates: Iterable<VectorCandidate>): Ranked[] {
  const ranked: Ranked[] = [];
  const bytes = query.length * 4;
  for (const c of candidates) {
    if (c.vector.byteLength !== bytes) continue;
    ranked.push({ seq: c.seq, score: dot(query, decodeVector(c.vector)) });
  }
  ranked.sort(byScoreThenNewer);
  return ranked;
}

/** Best score first; equal scores put the higher (newer) seq first so order is total and stable. */
export function byScoreThenNewer(a: Ranked, b: Ranked): number {
  return b.score - a.score || b.seq - a.seq;
}
