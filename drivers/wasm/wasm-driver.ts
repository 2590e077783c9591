/**
 * The wasm driver: SQLite compiled to WebAssembly (@sqlite.org/sqlite-wasm,
 * pinned) over a node:fs file layer with the `portable` lock protocol and a
 * cross-process WAL index. It runs wherever Node >= 20 runs. It must never
 * share a database file with the native driver: see docs/drivers.md.
 */
import type { SqliteCapabilities, DriverLoadResult, Driver, Connection, OpenOptions } from '../../src/db/contract/driver.js';
import { SQLITE_CAPABILITIES } from '../../src/db/contract/driver.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { loadSqlite3, type Sqlite3 } from './sqlite-runtime.js';
import type { NodeFsVfs } from './node-fs-vfs.js';
import { installNodeFsVfs } from './vfs-install.js';
import { WasmConnection } from './wasm-connection.js';
import { LockRecord } from './lock-table.js';
import { resolve } from 'node:path';

/** Loads the wasm module and registers the file layer, or says why it cannot. Never throws. */
export async function loadWasmDriver(): Promise<DriverLoadResult> {
  let sqlite3: Sqlite3;
  let vfs: NodeFsVfs;
  try {
    sqlite3 = await loadSqlite3();
    vfs = installNodeFsVfs(sqlite3);
  } catch (error) {
    return { ok: false, reason: `the wasm driver failed to start: ${(error as Error)?.message ?? String(error)}` };
  }
  const capabilities: SqliteCapabilities = {
    name: 'wasm',
    sqliteVersion: sqlite3.version.libVersion,
    lockProtocol: 'portable',
    // The file layer offers SQLite shared memory (io methods version 2, shm-index.ts).
    wal: true,

    ...SQLITE_CAPABILITIES,
  };
  const driver: Driver = {
    capabilities,
    open(path: string, options: OpenOptions): Connection {
      if (typeof path !== 'string' || path === '') throw new DbError('cantopen', 'a database path is required');
      LockRecord.refuseUnjudgeable(resolve(path));
      return WasmConnection.open(sqlite3, vfs, path, options, capabilities);
    },
  };
  return { ok: true, driver };
}
