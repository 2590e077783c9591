/**
 * Registers the file layer with a SQLite runtime: the one place that ties the
 * layer's state (node-fs-vfs.ts) to its C-facing methods (vfs-facade.ts), so
 * neither of those imports the other's module at run time.
 */
import { NodeFsVfs, VFS_NAME } from './node-fs-vfs.js';
import type { Sqlite3 } from './sqlite-runtime.js';
import { registerFacade } from './vfs-facade.js';

/** One file layer per SQLite runtime: the VFS is registered in it once. */
const layers = new WeakMap<Sqlite3, NodeFsVfs>();

/** Registers the file layer with SQLite (once per runtime) and returns its state. */
export function installNodeFsVfs(sqlite3: Sqlite3): NodeFsVfs {
  const known = layers.get(sqlite3);
  if (known !== undefined) return known;
  const layer = new NodeFsVfs();
  registerFacade(sqlite3, layer, VFS_NAME);
  layers.set(sqlite3, layer);
  return layer;
}
