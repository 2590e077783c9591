/**
 * Two compact copies of every memory vector, kept in process memory: one bit
 * per dimension (96 bytes at 768 dimensions), scanned for every memory by
 * Hamming distance, and one byte per dimension (int8 with a per-vector
 * scale), which re-ranks the nearest codes; the exact float vectors, read
 * from the database, then order the best of those (search.ts). 868 bytes per
 * memory at 768 dimensions instead of 3,072 read and multiplied per query.
 *
 * A bit is the sign of the dimension after subtracting a center: the mean of
 * the first vectors the cache ever loads, frozen so every code compares with
 * every other. Real embeddings are not centered on zero (every text shares
 * some direction); without the center most bits would say the same thing.
 *
 * Safe without invalidation: a row's vector for a given model never changes
 * meaning (an edit is a new seq; a re-embed of the same seq under the same
 * model embeds the same text), and search scores only seqs the database
 * still lists as live memory revisions, so codes of superseded, deleted or
 * purged revisions are never used, only pruned. A model change starts a
 * fresh cache.
 */
import type { Database } from '../db/contract/database.js';
import { decodeVector } from './vector-codec.js';

/** Upper bound on cached vectors per database and process: 200,000 x 768 dimensions is 174 MB. */
export const VECTOR_CACHE_MAX_CODES = 200_000;

/** A vector as stored: its row and BLOB. */
export interface StoredVector {
  /** The message row. */
  readonly seq: number;
  /** Normalized little-endian float32. */
  readonly vector: Uint8Array;
}

/** Bits set in a 32-bit word (the SWAR count: no table, no loop). */
function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
}

export class VectorCache {
  /** The model every cached vector belongs to. */
  readonly model: string;
  readonly #maxCodes: number;
  readonly #slots = new Map<number, number>();
  #dims = 0;
  #wordsPerCode = 0;
  #center: Float32Array | undefined;
  #codes = new Uint32Array(0);
  #int8 = new Int8Array(0);
  #scales = new Float32Array(0);
  #used = 0;
  /** Bumped whenever a seq's slot may have changed (added, pruned): what a kept slot list is checked against. */
  #version = 0;
  #slotList: { readonly seqs: readonly number[]; readonly version: number; readonly slots: Int32Array } | undefined;

  constructor(model: string, maxCodes = VECTOR_CACHE_MAX_CODES) {
    this.model = model;
    this.#maxCodes = maxCodes;
  }

  /** Number of cached codes. */
  get size(): number {
    return this.#slots.size;
  }

  /** The dimension count of the cached vectors (0 before the first). */
  get dimensions(): number {
    return this.#dims;
  }

  /** Bytes the codes and int8 vectors occupy (what the cache costs beyond its index of seqs). */
  get codeBytes(): number {
    return this.#codes.byteLength + this.#int8.byteLength + this.#scales.byteLength;
  }

  has(seq: number): boolean {
    return this.#slots.has(seq);
  }

  /**
   * Caches the codes of `rows` while there is room. The first call fixes the
   * dimension count and the center; vectors of another dimension are skipped
   * (another model's, awaiting re-embedding).
   */
  addAll(rows: readonly StoredVector[]): void {
    if (this.#center === undefined) this.#start(rows);
    for (const row of rows) {
      if (row.vector.byteLength !== this.#dims * 4 || this.#slots.has(row.seq) || this.#slots.size >= this.#maxCodes) continue;
      const slot = this.#used++;
      this.#grow(slot + 1);
      const vector = decodeVector(row.vector);
      this.#encodeInto(vector, this.#codes, slot * this.#wordsPerCode);
      this.#quantizeInto(vector, slot);
      this.#slots.set(row.seq, slot);
      this.#version++;
    }
  }

  /**
   * The slot of each of `seqs` (-1 when not cached), kept while `seqs` is the
   * same array and no slot moved: the live-memory list is one array between
   * memory writes (live-memories.ts), and a Map lookup per memory per query
   * cost more than comparing its code.
   */
  slotsOf(seqs: readonly number[]): Int32Array {
    const kept = this.#slotList;
    if (kept !== undefined && kept.seqs === seqs && kept.version === this.#version) return kept.slots;
    const slots = new Int32Array(seqs.length);
    for (let i = 0; i < seqs.length; i++) slots[i] = this.#slots.get(seqs[i] as number) ?? -1;
    this.#slotList = { seqs, version: this.#version, slots };
    return slots;
  }

  /**
   * Indexes into `slots` of the `wanted` codes nearest `code` by Hamming
   * distance (ties to the earlier index), plus every index whose slot is -1
   * (not cached: its vector is looked up exactly). A counting selection: the
   * distances are small integers.
   */
  nearest(slots: Int32Array, code: Uint32Array, wanted: number): number[] {
    const words = this.#wordsPerCode;
    const codes = this.#codes;
    const distances = new Uint16Array(slots.length);
    const histogram = new Uint32Array(words * 32 + 1);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      if (slot < 0) continue;
      const base = slot * words;
      let d = 0;
      for (let w = 0; w < words; w++) d += bitCount((codes[base + w] as number) ^ (code[w] as number));
      distances[i] = d;
      histogram[d] = (histogram[d] as number) + 1;
    }
    let threshold = -1;
    let below = 0;
    for (let d = 0, seen = 0; d < histogram.length && seen < wanted; d++) {
      below = seen;
      seen += histogram[d] as number;
      threshold = d;
    }
    let atThreshold = wanted - below;
    const out: number[] = [];
    for (let i = 0; i < slots.length; i++) {
      const d = distances[i] as number;
      if ((slots[i] as number) < 0 || d < threshold || (d === threshold && atThreshold-- > 0)) out.push(i);
    }
    return out;
  }

  /** approximateScore by slot (a value slotsOf gave, not -1). */
  approximateScoreAt(slot: number, query: Float32Array): number {
    const q = this.#int8;
    const dims = this.#dims;
    const base = slot * dims;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    const n = dims - (dims % 4);
    let i = 0;
    for (; i < n; i += 4) {
      s0 += (query[i] as number) * (q[base + i] as number);
      s1 += (query[i + 1] as number) * (q[base + i + 1] as number);
      s2 += (query[i + 2] as number) * (q[base + i + 2] as number);
      s3 += (query[i + 3] as number) * (q[base + i + 3] as number);
    }
    for (; i < dims; i++) s0 += (query[i] as number) * (q[base + i] as number);
    return (s0 + s1 + s2 + s3) * (this.#scales[slot] as number);
  }

  /** The query's code, or undefined when its dimension is not the cache's. */
  queryCode(query: Float32Array): Uint32Array | undefined {
    if (this.#center === undefined || query.length !== this.#dims) return undefined;
    const code = new Uint32Array(this.#wordsPerCode);
    this.#encodeInto(query, code, 0);
    return code;
  }

  /** Hamming distance between `code` and the cached code of `seq`; undefined when `seq` is not cached. */
  distance(seq: number, code: Uint32Array): number | undefined {
    const slot = this.#slots.get(seq);
    if (slot === undefined) return undefined;
    const codes = this.#codes;
    const base = slot * this.#wordsPerCode;
    let d = 0;
    for (let i = 0; i < code.length; i++) d += bitCount((codes[base + i] as number) ^ (code[i] as number));
    return d;
  }

  /** The dot product of `query` with the int8 copy of `seq`'s vector (within about 0.01 of the exact one); undefined when not cached. */
  approximateScore(seq: number, query: Float32Array): number | undefined {
    const slot = this.#slots.get(seq);
    return slot === undefined ? undefined : this.approximateScoreAt(slot, query);
  }

  /** Drops entries whose seq is not in `live` (no longer a candidate) and compacts the codes. */
  pruneTo(live: ReadonlySet<number>): void {
    const codes = new Uint32Array(this.#codes.length);
    const int8 = new Int8Array(this.#int8.length);
    const scales = new Float32Array(this.#scales.length);
    let used = 0;
    for (const [seq, slot] of this.#slots) {
      if (!live.has(seq)) {
        this.#slots.delete(seq);
        continue;
      }
      codes.set(this.#codes.subarray(slot * this.#wordsPerCode, (slot + 1) * this.#wordsPerCode), used * this.#wordsPerCode);
      int8.set(this.#int8.subarray(slot * this.#dims, (slot + 1) * this.#dims), used * this.#dims);
      scales[used] = this.#scales[slot] as number;
      this.#slots.set(seq, used++);
    }
    this.#codes = codes;
    this.#int8 = int8;
    this.#scales = scales;
    this.#used = used;
    this.#version++;
  }

  #start(rows: readonly StoredVector[]): void {
    const first = rows[0];
    if (first === undefined || first.vector.byteLength % 4 !== 0) return;
    this.#dims = first.vector.byteLength / 4;
    this.#wordsPerCode = Math.ceil(this.#dims / 32);
    const center = new Float32Array(this.#dims);
    let n = 0;
    for (const row of rows) {
      if (row.vector.byteLength !== this.#dims * 4) continue;
      const v = decodeVector(row.vector);
      for (let i = 0; i < this.#dims; i++) center[i] = (center[i] as number) + (v[i] as number);
      n++;
    }
    for (let i = 0; i < this.#dims; i++) center[i] = (center[i] as number) / n;
    this.#center = center;
  }

  #grow(slots: number): void {
    const needed = slots * this.#wordsPerCode;
    if (needed <= this.#codes.length) return;
    const capacity = Math.max(slots, (this.#codes.length / this.#wordsPerCode) * 2, 1024);
    const next = new Uint32Array(capacity * this.#wordsPerCode);
    next.set(this.#codes);
    this.#codes = next;
    const int8 = new Int8Array(capacity * this.#dims);
    int8.set(this.#int8);
    this.#int8 = int8;
    const scales = new Float32Array(capacity);
    scales.set(this.#scales);
    this.#scales = scales;
  }

  /** Each component as a multiple of the vector's largest / 127, in one byte. */
  #quantizeInto(vector: Float32Array, slot: number): void {
    let max = 0;
    for (let i = 0; i < this.#dims; i++) max = Math.max(max, Math.abs(vector[i] as number));
    const scale = max > 0 ? max / 127 : 1;
    const base = slot * this.#dims;
    for (let i = 0; i < this.#dims; i++) this.#int8[base + i] = Math.round((vector[i] as number) / scale);
    this.#scales[slot] = scale;
  }

  #encodeInto(vector: Float32Array, out: Uint32Array, offset: number): void {
    const center = this.#center as Float32Array;
    out.fill(0, offset, offset + this.#wordsPerCode);
    for (let i = 0; i < this.#dims; i++) {
      if ((vector[i] as number) > (center[i] as number)) out[offset + (i >>> 5)] = ((out[offset + (i >>> 5)] as number) | (1 << (i & 31))) >>> 0;
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
