/**
 * Finds the 4-byte words where two areas of SQLite's wasm memory differ, in a
 * few lines of WebAssembly that share that memory. The WAL index compares
 * whole 32 KiB regions with their shadow copies on every push and pull
 * (shm-index.ts); in JavaScript that was 64 native compares plus a word loop
 * per region, about 40 µs per commit warm and several times that while the
 * JIT has not optimised it yet (a process's first thousand commits). Baseline
 * WebAssembly (Liftoff) runs this loop at full speed from its first call:
 * a few µs per region.
 *
 * SIMD compares 64 bytes per step and only a differing 64-byte block is
 * scanned word by word (Liftoff compiles a scalar word loop poorly: 55-80 µs
 * per region, worse than the native compares it replaces). The module, in
 * text form:
 *
 *   (module
 *     (import "env" "memory" (memory 0))
 *     ;; diff(a, b, nBytes, out): nBytes a multiple of 64; writes the index (in
 *     ;; words, from a) of every word that differs to out[0..k), returns k.
 *     (func (export "diff") (param $a i32) (param $b i32) (param $n i32) (param $out i32) (result i32)
 *       (local $pa i32) (local $pb i32) (local $end i32) (local $k i32) (local $j i32)
 *       pa = a; pb = b; end = a + n
 *       block $done
 *         loop $next
 *           (br_if $done (i32.ge_u (local.get $pa) (local.get $end)))
 *           (if (v128.any_true (v128.or (v128.or (xor at pa, pb) (xor at +16))
 *                                       (v128.or (xor at +32) (xor at +48))))
 *             (j = 0; until j >= 64: (if (i32.ne (i32.load (pa+j)) (i32.load (pb+j)))
 *                                      out[k++] = (pa - a + j) >> 2); j += 4))
 *           pa += 64; pb += 64
 *           br $next
 *         end
 *       end
 *       k))
 */

const I32 = 0x7f;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const I32_CONST = 0x41;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const I32_SHR_U = 0x76;
const I32_NE = 0x47;
const I32_GE_U = 0x4f;
const I32_LOAD = 0x28;
const I32_STORE = 0x36;
const SIMD = 0xfd;
const V128_LOAD = 0x00;
const V128_OR = 0x50;
const V128_XOR = 0x51;
const V128_ANY_TRUE = 0x53;
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const EMPTY = 0x40;
const BR = 0x0c;
const BR_IF = 0x0d;
const END = 0x0b;
const [A, B, N, OUT, PA, PB, END_, K, J] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
/** Bytes compared per SIMD step. */
export const DIFF_BLOCK_BYTES = 64;

/** An unsigned LEB128 number, as lengths are written in the binary format. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    const low = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? low : low | 0x80);
  } while (n !== 0);
  return out;
}

/** A section: id, its length, its body. */
function section(id: number, body: number[]): number[] {
  return [id, ...leb(body.length), ...body];
}

/** Pushes v128.xor of the 16 bytes at pa+offset and pb+offset. */
const xorAt = (offset: number): number[] => [
  ...[LOCAL_GET, PA, SIMD, V128_LOAD, 0, offset],
  ...[LOCAL_GET, PB, SIMD, V128_LOAD, 0, offset],
  ...[SIMD, V128_XOR],
];

const OR = [SIMD, V128_OR];

/** i32.const 64: constants are signed LEB128, and 64 has the sign bit of one byte set. */
const BLOCK_CONST = [I32_CONST, 0xc0, 0x00];

/** Pushes local `p` + local J. */
const plusJ = (p: number): number[] => [LOCAL_GET, p, LOCAL_GET, J, I32_ADD];

/** The scan of one differing 64-byte block: out[k++] = (pa - a + j) >> 2 for every differing word. */
const scanBlock = [
  ...[I32_CONST, 0, LOCAL_SET, J, BLOCK, EMPTY, LOOP, EMPTY],
  ...[LOCAL_GET, J, ...BLOCK_CONST, I32_GE_U, BR_IF, 1],
  ...[...plusJ(PA), I32_LOAD, 2, 0, ...plusJ(PB), I32_LOAD, 2, 0, I32_NE, IF, EMPTY],
  ...[LOCAL_GET, OUT, LOCAL_GET, K, I32_CONST, 2, I32_SHL, I32_ADD],
  ...[...plusJ(PA), LOCAL_GET, A, I32_SUB, I32_CONST, 2, I32_SHR_U, I32_STORE, 2, 0],
  ...[LOCAL_GET, K, I32_CONST, 1, I32_ADD, LOCAL_SET, K, END],
  ...[LOCAL_GET, J, I32_CONST, 4, I32_ADD, LOCAL_SET, J, BR, 0, END, END],
];

const code = [
  ...[1, 5, I32], // locals: pa, pb, end, k, j
  ...[LOCAL_GET, A, LOCAL_SET, PA, LOCAL_GET, B, LOCAL_SET, PB, LOCAL_GET, A, LOCAL_GET, N, I32_ADD, LOCAL_SET, END_],
  ...[BLOCK, EMPTY, LOOP, EMPTY],
  ...[LOCAL_GET, PA, LOCAL_GET, END_, I32_GE_U, BR_IF, 1],
  ...[...xorAt(0), ...xorAt(16), ...OR, ...xorAt(32), ...xorAt(48), ...OR, ...OR, SIMD, V128_ANY_TRUE],
  ...[IF, EMPTY, ...scanBlock, END],
  ...[LOCAL_GET, PA, ...BLOCK_CONST, I32_ADD, LOCAL_SET, PA, LOCAL_GET, PB, ...BLOCK_CONST, I32_ADD, LOCAL_SET, PB, BR, 0],
  ...[END, END],
  ...[LOCAL_GET, K, END],
];

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 1, I32]), // type 0: (i32 i32 i32 i32) -> i32
  ...section(2, [1, 3, ...Buffer.from('env'), 6, ...Buffer.from('memory'), 0x02, 0x00, 0x00]), // memory import, min 0
  ...section(3, [1, 0]), // one function of type 0
  ...section(7, [1, 4, ...Buffer.from('diff'), 0x00, 0]), // exported as "diff"
  ...section(10, [1, ...leb(code.length), ...code]),
]);

/** diff(a, b, nBytes, out): see the module text above. */
export type WordDiff = (a: number, b: number, nBytes: number, out: number) => number;

/** The slice of the WebAssembly JS API used here (the project's TypeScript lib declares none). */
interface WebAssemblyApi {
  /** Compiles a module. */
  Module: new (bytes: Uint8Array) => object;
  /** Instantiates a compiled module with its imports. */
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/**
 * The same comparison in plain JavaScript, for an engine that cannot compile
 * the SIMD module (a CPU without SSE4.1 or NEON, or WebAssembly SIMD turned
 * off): slower, never wrong. Reads the memory's buffer afresh on each call,
 * since SQLite may have grown it.
 */
function wordDiffInJavaScript(memory: object): WordDiff {
  const words = (): Int32Array => new Int32Array((memory as { buffer: ArrayBuffer }).buffer);
  return (a, b, nBytes, out) => {
    const w = words();
    const [wa, wb, wout] = [a >> 2, b >> 2, out >> 2];
    let k = 0;
    for (let j = 0; j < nBytes >> 2; j++) if (w[wa + j] !== w[wb + j]) w[wout + k++] = j;
    return k;
  };
}

/** Instantiates the SIMD module over `memory`, or undefined when this engine cannot compile it. */
function wordDiffInWebAssembly(memory: object): WordDiff | undefined {
  const api = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
  let instance: { readonly exports: Record<string, unknown> };
  try {
    instance = new api.Instance(new api.Module(MODULE), { env: { memory } });
  } catch {
    return undefined;
  }
  return instance.exports.diff as WordDiff;
}

/**
 * The comparison over `memory` (SQLite's WebAssembly.Memory): the SIMD module
 * where the engine compiles it, else the JavaScript loop (`simd: false` forces
 * the loop, for its test).
 */
export function wordDiff(memory: object, options: { readonly simd?: boolean } = {}): WordDiff {
  const diff = (options.simd ?? true ? wordDiffInWebAssembly(memory) : undefined) ?? wordDiffInJavaScript(memory);
  return (a, b, nBytes, out) => {
    if (nBytes % DIFF_BLOCK_BYTES !== 0) throw new Error(`word-diff compares whole ${DIFF_BLOCK_BYTES}-byte blocks, not ${nBytes} bytes`);
    return diff(a, b, nBytes, out);
  };
}
