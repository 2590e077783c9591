/**
 * Placeholder until the WebAssembly driver lands (its own issue): it reports
 * itself unavailable, so nothing selects it and no test reports it green.
 */
import type { DriverLoadResult } from '../../src/db/driver.js';

export async function loadWasmDriver(): Promise<DriverLoadResult> {
  return { ok: false, reason: 'the wasm driver is not built yet' };
}
