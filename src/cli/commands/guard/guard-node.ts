/**
 * Which Node the commit guard can read the bus with. A `posix` database is
 * read by the native driver, which needs node:sqlite (Node >= 22.13); a hook
 * written by a Node 20 (which has only the wasm driver) would otherwise let
 * every commit through with a warning, the guard silently off for the clone.
 * So `guard --install` writes a Node that can read the bus into the hook, and
 * the guard, finding at commit time that its Node cannot (the database was
 * converted since, or Node changed), hands the check to one that can; when
 * there is none it says so loudly, both times.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { LockProtocol } from '../../../db/contract/driver.js';
import { readFileState } from '../../../db/storage/file-header.js';
import { databasePath } from '../../../db/open/open-database.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';

/** Set in the environment of a guard a Node handed the check over to, so it never hands over again. */
export const HANDOVER_ENV = 'AGENTBUS_GUARD_HANDED_OVER';

/** The lock protocol of the existing database in `dataDir`, or undefined when there is none (or it is not one). */
export function busProtocol(dataDir: string): LockProtocol | undefined {
  const state = readFileState(databasePath(dataDir));
  return state.kind === 'agentbus' ? state.protocol : undefined;
}

/** True when this process's Node can load the driver `protocol` needs. */
export async function thisNodeReads(protocol: LockProtocol): Promise<boolean> {
  return (await loadDriver(DRIVER_FOR_PROTOCOL[protocol])).ok;
}

/** True when `node` can load node:sqlite, as the native driver does (without flags). */
function hasNodeSqlite(node: string, env: NodeJS.ProcessEnv): boolean {
  const run = spawnSync(node, ['-e', "require('node:sqlite')"], { env, stdio: 'ignore', timeout: 5000 });
  return run.status === 0;
}

const realOrUndefined = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

/**
 * Another Node on PATH that can read a `protocol` database, first found
 * wins, or undefined. Only posix needs looking for: every Node agentbus runs
 * on has the wasm driver.
 */
export function findReadingNode(protocol: LockProtocol, env: NodeJS.ProcessEnv): string | undefined {
  if (protocol !== 'posix') return undefined;
  const ours = realOrUndefined(process.execPath);
  const seen = new Set<string>(ours === undefined ? [] : [ours]);
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'node');
    const real = realOrUndefined(candidate);
    if (real === undefined || seen.has(real)) continue;
    seen.add(real);
    if (hasNodeSqlite(candidate, env)) return candidate;
  }
  return undefined;
}

/** What the guard says when no Node here can read the bus: the check is off. */
export function cannotCheckText(protocol: LockProtocol, dataDir: string): string {
  return (
    `WARNING: file reservations are NOT checked: ${databasePath(dataDir)} uses the ${protocol} lock protocol, which needs the ` +
    `${DRIVER_FOR_PROTOCOL[protocol]} driver (node:sqlite, Node >= 22.13), and neither this Node (${process.version}, ${process.execPath}) ` +
    'nor any node on PATH has it; install Node >= 22.13 and run `agentbus guard --install` again with it'
  );
}
