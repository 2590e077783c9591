/**
 * Which driver opens the file, declared in one place before any driver is
 * loaded: a list of steps, tried in order, for the file as its header
 * records it (src/db/storage/file-header.ts) and the driver setting.
 *
 *   file          setting                    steps
 *   new           auto                       open native | open wasm | refuse no_driver
 *   new           a driver                   open it | refuse setting_cannot_run
 *   P             auto, or P's own driver    open P's driver | convert (posix, may convert) or refuse driver_missing
 *   P             the other protocol's       convert (posix, may convert) | refuse protocol_mismatch
 *
 * "May convert" is `agentbus mcp` (convertWhenOnlyPortable): a posix file is
 * turned portable for a process that can speak only portable. The reverse is
 * never planned: a portable file serves every Node version, and `auto` opens
 * it with wasm. open-database.ts carries the steps out; doctor's lock_protocol
 * check applies the same settingConflicts.
 */
import type { DriverName, LockProtocol } from '../contract/driver.js';
import { DRIVER_FOR_PROTOCOL, type DriverChoice } from './select-driver.js';

export type OpenStep =
  /** Open with this driver if it runs here; otherwise go on to the next step (its reason kept for the next step's message). */
  | { readonly kind: 'open'; readonly driver: DriverName }
  /** Convert the posix file to portable, then open it with the portable driver, which must run: the setting asks for it, or the native driver cannot run. */
  | { readonly kind: 'convert'; readonly because: 'setting' | 'no_native' }
  /** Refuse, changing nothing. */
  | { readonly kind: 'refuse'; readonly because: 'protocol_mismatch' | 'driver_missing' | 'setting_cannot_run' | 'no_driver' };

/** True when the driver setting names the driver of the other protocol than the file's. */
export function settingConflicts(protocol: LockProtocol, choice: DriverChoice): boolean {
  return choice !== 'auto' && choice !== DRIVER_FOR_PROTOCOL[protocol];
}

/** The steps for `file` (an agentbus file's protocol, or `new` for a missing or empty one) under `choice`. */
export function openSteps(file: LockProtocol | 'new', choice: DriverChoice, mayConvert: boolean): readonly OpenStep[] {
  if (file === 'new') {
    if (choice !== 'auto') return [{ kind: 'open', driver: choice }, { kind: 'refuse', because: 'setting_cannot_run' }];
    return [{ kind: 'open', driver: DRIVER_FOR_PROTOCOL.posix }, { kind: 'open', driver: DRIVER_FOR_PROTOCOL.portable }, { kind: 'refuse', because: 'no_driver' }];
  }
  const converts = file === 'posix' && mayConvert;
  if (settingConflicts(file, choice)) return [converts ? { kind: 'convert', because: 'setting' } : { kind: 'refuse', because: 'protocol_mismatch' }];
  return [{ kind: 'open', driver: DRIVER_FOR_PROTOCOL[file] }, converts ? { kind: 'convert', because: 'no_native' } : { kind: 'refuse', because: 'driver_missing' }];
}
