/**
 * Vectors as stored: normalized to unit length, then little-endian float32
 * bytes in `embeddings.vector`. Normalizing at store time makes the dot
 * product the cosine similarity, so ranking is one multiply-add per dimension.
 */
import { endianness } from 'node:os';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** The unit vector in float32, or undefined when it has no direction (all zeros) or holds a non-finite value. */
export function normalizeVector(values: ArrayLike<number>): Float32Array | undefined {
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    if (!Number.isFinite(x)) return undefined;
    sum += x * x;
  }
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] as number) / norm;
  return out;
}

/** The BLOB for a vector: 4 bytes per dimension, little-endian whatever the host. */
export function encodeVector(vector: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i] as number, true);
  return bytes;
}

/** The dimension count a stored BLOB holds, or undefined when its length is not a whole number of float32s. */
export function vectorDimensions(blob: Uint8Array): number | undefined {
  return blob.byteLength > 0 && blob.byteLength % 4 === 0 ? blob.byteLength / 4 : undefined;
}

/**
 * A float32 view of a stored BLOB. Shares memory when the bytes are aligned
 * on a little-endian host (the common case), copies otherwise.
 */
export function decodeVector(blob: Uint8Array): Float32Array {
  const dims = blob.byteLength >>> 2;
  if (LITTLE_ENDIAN_HOST && blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, dims);
  const out = new Float32Array(dims);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  for (let i = 0; i < dims; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** The dot product of two equal-length vectors (cosine similarity when both are normalized). */
export function dot(a: Float32Array, b: Float32Array): number {
  // Four independent sums let the CPU overlap the multiply-adds; measurably faster in V8.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length;
  const m = n - (n % 4);
  let i = 0;
  for (; i < m; i += 4) {
    s0 += (a[i] as number) * (b[i] as number);
    s1 += (a[i + 1] as number) * (b[i + 1] as number);
    s2 += (a[i + 2] as number) * (b[i + 2] as number);
    s3 += (a[i + 3] as number) * (b[i + 3] as number);
  }
  for (; i < n; i++) s0 += (a[i] as number) * (b[i] as number);
  return s0 + s1 + s2 + s3;
}
