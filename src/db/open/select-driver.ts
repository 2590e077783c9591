/**
 * The one module under src/ that imports drivers/. Everything else reaches a
 * driver through the Driver contract it returns.
 */
import type { DriverCapabilities, DriverLoadResult, DriverName, LockProtocol } from '../contract/driver.js';

/** What a user may ask for: a driver by name, or `auto`. */
export type DriverChoice = 'auto' | DriverName;

export const DRIVER_CHOICES: readonly DriverChoice[] = ['auto', 'native', 'wasm'];

/** Where a driver choice came from, so that a message names the place to change it. */
export type DriverChoiceSource =
  /** Nothing set it: `auto`. */
  | { readonly kind: 'default' }
  /** The AGENTBUS_DRIVER environment variable. */
  | { readonly kind: 'env' }
  /** The `driver` key of this config file. */
  | { readonly kind: 'file'; readonly path: string };

/** The setting as the user wrote it: `AGENTBUS_DRIVER=wasm`, `"driver": "native" in <file>`, or `no driver setting (auto)`. */
export function describeDriverSetting(choice: DriverChoice, source: DriverChoiceSource): string {
  switch (source.kind) {
    case 'env':
      return `AGENTBUS_DRIVER=${choice}`;
    case 'file':
      return `"driver": "${choice}" in ${source.path}`;
    case 'default':
      return `no driver setting (${choice})`;
  }
}

/** How to change the setting to `value`, in the place it came from. */
export function changeDriverSetting(source: DriverChoiceSource, value: DriverChoice): string {
  switch (source.kind) {
    case 'env':
      return value === 'auto' ? 'unset AGENTBUS_DRIVER (or set it to auto)' : `set AGENTBUS_DRIVER=${value}`;
    case 'file':
      return value === 'auto' ? `remove "driver" from ${source.path} (or set it to "auto")` : `set "driver": "${value}" in ${source.path}`;
    case 'default':
      return `set AGENTBUS_DRIVER=${value} (or "driver": "${value}" in the config file)`;
  }
}

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
        ? import('../../../drivers/native/native-driver.js').then((m) => m.loadNativeDriver())
        : import('../../../drivers/wasm/wasm-driver.js').then((m) => m.loadWasmDriver());
    loaded.set(name, result);
  }
  return result;
}

let postgres: Promise<DriverLoadResult<DriverCapabilities>> | undefined;

/**
 * Loads the postgres driver once per process, which a database_url selects
 * (never `driver`): a module of its own, required only here, so a SQLite
 * user's process never loads it or the `pg` client.
 */
export function loadPostgresDriver(): Promise<DriverLoadResult<DriverCapabilities>> {
  postgres ??= import('../../../drivers/postgres/postgres-driver.js').then(
    (m) => m.loadPostgresDriver(),
    (error: unknown) => ({ ok: false, reason: `the postgres driver failed to load: ${(error as Error)?.message ?? String(error)}` }) as const,
  );
  return postgres;
}
