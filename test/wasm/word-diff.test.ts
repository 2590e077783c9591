/**
 * The WAL index pushes and pulls exactly the words word-diff.ts reports, so
 * a word it missed would be a commit others never see, and one it invented
 * a word written that SQLite did not change. These cases compare it, in
 * SQLite's own wasm memory, with a plain JavaScript comparison; the same for
 * the loop used where the engine cannot compile WebAssembly SIMD.
 */
import { describe, expect, it } from 'vitest';
import { loadSqlite3 } from '../../drivers/wasm/sqlite-runtime.js';
import { DIFF_BLOCK_BYTES, wordDiff } from '../../drivers/wasm/word-diff.js';

const REGION = 32768;

async function areas(simd = true): Promise<{ a: number; b: number; out: number; heap32: () => Int32Array; diff: ReturnType<typeof wordDiff> }> {
  const sqlite3 = await loadSqlite3();
  const wasm = sqlite3.wasm;
  const [a, b, out] = [wasm.alloc(REGION), wasm.alloc(REGION), wasm.alloc(REGION)];
  return { a, b, out, heap32: () => wasm.heap32(), diff: wordDiff(wasm.memory, { simd }) };
}

/** The words in [0, n) where a and b differ, the plain way. */
function expected(heap: Int32Array, a: number, b: number, n: number): number[] {
  const found: number[] = [];
  for (let w = 0; w < n; w++) if (heap[(a >> 2) + w] !== heap[(b >> 2) + w]) found.push(w);
  return found;
}

describe('word-diff', () => {
  it.each([
    ['the SIMD module', true],
    ['the JavaScript fallback', false],
  ])('%s reports exactly the differing words: none, the first, the last, every one, and random ones over random lengths', async (_name, simd) => {
    const { a, b, out, heap32, diff } = await areas(simd);
    const words = REGION / 4;
    const fill = (change: (w: number) => boolean): void => {
      const heap = heap32();
      for (let w = 0; w < words; w++) {
        const v = (w * 2654435761) | 0;
        heap[(a >> 2) + w] = v;
        heap[(b >> 2) + w] = change(w) ? v ^ (1 << (w % 32)) : v;
      }
    };
    const check = (nBytes: number): void => {
      const k = diff(a, b, nBytes, out);
      const heap = heap32();
      expect(Array.from(heap.subarray(out >> 2, (out >> 2) + k))).toEqual(expected(heap, a, b, nBytes / 4));
    };
    fill(() => false);
    check(REGION);
    fill((w) => w === 0);
    check(REGION);
    fill((w) => w === words - 1);
    check(REGION);
    fill(() => true);
    check(REGION);
    for (let round = 0; round < 50; round++) {
      const density = [0.0005, 0.01, 0.3][round % 3] as number;
      fill(() => Math.random() < density);
      check(DIFF_BLOCK_BYTES * (1 + Math.floor(Math.random() * (REGION / DIFF_BLOCK_BYTES))));
    }
  });

  it('refuses a length that is not whole blocks', async () => {
    const { a, b, out, diff } = await areas();
    expect(() => diff(a, b, DIFF_BLOCK_BYTES + 8, out)).toThrow(Error);
  });
});
