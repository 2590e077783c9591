/**
 * C strings in wasm memory, read without the runtime's helper.
 */
import type { SqliteWasm } from './sqlite-runtime.js';

const utf8 = new TextDecoder();

/**
 * The NUL-terminated UTF-8 string at `p` in wasm memory. Not the runtime's
 * cstrToJs: it finds the NUL with a JavaScript loop that V8, in some servers,
 * optimised and then deoptimised on nearly every call (78 times in 8 minutes
 * in one receiver of a soak, half of its deoptimisations), and every new
 * optimisation is a compile job on a V8 worker thread, whose malloc arena is
 * where a wasm server's memory grows (docs/performance.md, "Soak").
 * indexOf finds the NUL natively.
 */
export function readCString(wasm: Pick<SqliteWasm, 'heap8u'>, p: number): string {
  const heap = wasm.heap8u();
  const end = heap.indexOf(0, p);
  return utf8.decode(heap.subarray(p, end < 0 ? heap.length : end));
}
