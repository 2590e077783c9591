/**
 * Brute-force semantic ranking: every candidate's stored vector against the
 * query vector. Deliberately simple; at single-user volumes it is
 * milliseconds (see scripts/bench-search.js for the measured curve).
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
