/**
 * Child processes spawned by tests run compiled code from dist/, so the build
 * must match the source under test. scripts/test.js builds once and sets
 * AGENTBUS_TEST_BUILT; a direct `npx vitest` builds here.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function setup(): void {
  if (process.env.AGENTBUS_TEST_BUILT === '1') return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
}
