/**
 * The one module under src/ that imports drivers/. Everything else reaches a
 * driver through the Driver contract it returns.
 */
import type { DriverLoadResult, DriverName, LockProtocol } from './driver.js';

/** What a user may ask for: a driver by name, or `auto`. */
export type DriverChoice = 'auto' | DriverName;

export const DRIVER_CHOICES: readonly DriverChoice[] = ['auto', 'native', 'wasm'];

/** The driver that speaks each lock protocol. */
export const DRIVER_FOR_PROTOCOL: Readonly<Record<LockProtocol, DriverName>> = {
  posix: 'native',
  portable: 'wasm',
};

const loaded = new Map<DriverName, Promise<DriverLoadResult>>();

/** Loads a driver once per process; never throws, says why when unavailable. */
export function loadDriver(name: DriverName): Promise<DriverLoadResult> {
  let result = loaded.get(name);
  if (result === undefined) {
    result =
      name === 'native'
        ? import('../../drivers/native/native-driver.js').then((m) => m.loadNativeDriver())
        : import('../../drivers/wasm/wasm-driver.js').then((m) => m.loadWasmDriver());
    loaded.set(name, result);
  }
  return result;
}
