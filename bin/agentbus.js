#!/usr/bin/env node
// The agentbus executable: runs the compiled CLI from dist/.
import { existsSync } from 'node:fs';
import module from 'node:module';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    `agentbus: not built yet: run \`npm ci\` (or \`npm run build\`) in ${new URL('..', import.meta.url).pathname}\n`,
  );
  process.exit(1);
}
// Cached compiled code makes every harness start faster; missing on old Node, harmless.
module.enableCompileCache?.();
const { runFromProcess } = await import(entry.href);
await runFromProcess();
