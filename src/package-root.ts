/**
 * The directory holding agentbus's package.json, found by walking up from
 * this module, so the same code works from src/ (tests) and dist/src/ (built).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('agentbus: package.json not found above the running module');
    dir = parent;
  }
  root = dir;
  return dir;
}
