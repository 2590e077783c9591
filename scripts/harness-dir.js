// Where scripts/install-harnesses.js puts the harnesses and test/harnesses/
// finds them: AGENTBUS_HARNESS_DIR, or a folder per set of pinned versions
// under ~/.cache/agentbus/harnesses.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The pinned versions, by npm package name. */
export const HARNESS_VERSIONS = JSON.parse(readFileSync(new URL('./harness-versions.json', import.meta.url), 'utf8'));

export function harnessDir() {
  if (process.env.AGENTBUS_HARNESS_DIR) return process.env.AGENTBUS_HARNESS_DIR;
  const pins = createHash('sha256').update(JSON.stringify(HARNESS_VERSIONS)).digest('hex').slice(0, 12);
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'agentbus', 'harnesses', pins);
}
