/**
 * The Node binaries a multi-version test runs: Node >= 22.13 (node:sqlite, so
 * both drivers) and a Node that can use only the wasm driver. That is the
 * machine's Node 20 when there is one; elsewhere (a CI machine with only Node
 * 22) a Node 22 whose node:sqlite is switched off stands in, which is what
 * the code sees on Node 20: the native driver does not load.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface NodeRuntime {
  /** The node executable. */
  readonly bin: string;
  /** Extra environment it needs (NODE_OPTIONS for the stand-in). */
  readonly env: Readonly<Record<string, string>>;
  /** e.g. `Node v20.20.2`, or `Node v22.23.3 without node:sqlite`. */
  readonly label: string;
}

function version(bin: string): string {
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
}

function major(bin: string): number {
  return Number(version(bin).slice(1).split('.')[0]);
}

/** The environment that switches node:sqlite off in a Node 22 child (Node 20 lacks both). */
export function withoutNodeSqlite(bin: string = process.execPath): Record<string, string> {
  return major(bin) >= 22 ? { NODE_OPTIONS: '--no-experimental-sqlite' } : {};
}

/** Node >= 22: this process's Node if it is one, else the dev dependency. */
export function node22(): NodeRuntime {
  for (const bin of [process.execPath, join(ROOT, 'node_modules', 'node', 'bin', 'node')]) {
    if (existsSync(bin) && major(bin) >= 22) return { bin, env: {}, label: `Node ${version(bin)}` };
  }
  throw new Error('no Node >= 22: run `npm ci` (it installs Node 22 as a dev dependency)');
}

/** A Node that can use only the wasm driver: a Node < 22 on PATH, else Node 22 without node:sqlite. */
export function nodeWasmOnly(): NodeRuntime {
  const candidates = [process.execPath, process.env.npm_node_execpath ?? '', ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node'))];
  for (const bin of candidates) {
    if (bin !== '' && existsSync(bin) && major(bin) < 22) return { bin, env: {}, label: `Node ${version(bin)}` };
  }
  const { bin } = node22();
  return { bin, env: withoutNodeSqlite(bin), label: `Node ${version(bin)} without node:sqlite` };
}
