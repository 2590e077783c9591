/**
 * The installed harness binaries (scripts/install-harnesses.js puts them in
 * a cache folder outside node_modules). A missing or stale install fails the
 * test with the command that fixes it: these tests never skip.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessDir, HARNESS_VERSIONS } from '../../../scripts/harness-dir.js';

export type HarnessName = 'claude' | 'codex' | 'gemini';

/** The folder holding node_modules/.bin/{claude,codex,gemini}. */
export function harnessFolder(): string {
  const dir = harnessDir();
  const marker = join(dir, 'installed.json');
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== JSON.stringify(HARNESS_VERSIONS)) {
    throw new Error(`the harnesses (${JSON.stringify(HARNESS_VERSIONS)}) are not installed in ${dir}: run \`npm run harnesses:install\``);
  }
  return dir;
}

/** The path of a harness executable. */
export function harnessBin(name: HarnessName): string {
  return join(harnessFolder(), 'node_modules', '.bin', name);
}
