/**
 * Decoded vectors kept in process memory between searches, so a semantic
 * query reads only candidate seqs from SQLite instead of every vector BLOB
 * (at 10,000 memories x 768 dimensions that is 30 MB per query).
 *
 * Safe without invalidation: a row's vector for a given model never changes
 * meaning (an edit is a new seq; a re-embed of the same seq under the same
 * model embeds the same text), and search scores only seqs the database
 * still lists as live memory revisions, so entries of superseded, deleted or
 * purged revisions are never used, only pruned. A model change starts a
 * fresh cache.
 */
import type { Database } from '../db/database.js';
import { decodeVector } from './vector-codec.js';

/**
 * Upper bound on cached vector bytes per database and process (about 43,000
 * vectors at 768 dimensions): every agent session runs its own process, so
 * this is multiplied by the number of sessions. Past it, the rest are read per query.
 */
export const VECTOR_CACHE_MAX_BYTES = 128 * 1024 * 1024;

export class VectorCache {
  /** The model every cached vector belongs to. */
  readonly model: string;
  readonly #vectors = new Map<number, Float32Array>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(model: string, maxBytes = VECTOR_CACHE_MAX_BYTES) {
    this.model = model;
    this.#maxBytes = maxBytes;
  }

  /** Number of cached vectors. */
  get size(): number {
    return this.#vectors.size;
  }

  get(seq: number): Float32Array | undefined {
    return this.#vectors.get(seq);
  }

  /** Caches a copy of the BLOB's vector if there is room; returns the decoded vector either way. */
  add(seq: number, blob: Uint8Array): Float32Array {
    // A private copy: the driver may reuse or keep the BLOB's buffer, and an aligned view would pin it.
    const vector = new Float32Array(decodeVector(blob));
    if (this.#bytes + vector.byteLength <= this.#maxBytes && !this.#vectors.has(seq)) {
      this.#vectors.set(seq, vector);
      this.#bytes += vector.byteLength;
    }
    return vector;
  }

  /** Drops entries whose seq is not in `live` (no longer a candidate). */
  pruneTo(live: ReadonlySet<number>): void {
    for (const [seq, vector] of this.#vectors) {
      if (!live.has(seq)) {
        this.#vectors.delete(seq);
        this.#bytes -= vector.byteLength;
      }
    }
  }
}

const caches = new WeakMap<Database, VectorCache>();

/** The cache for `db` and `model`; a different model than last time starts an empty one. */
export function vectorCacheFor(db: Database, model: string): VectorCache {
  let cache = caches.get(db);
  if (cache === undefined || cache.model !== model) {
    cache = new VectorCache(model);
    caches.set(db, cache);
  }
  return cache;
}
