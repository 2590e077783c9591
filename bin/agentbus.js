#!/usr/bin/env node
// The agentbus executable: runs the bundle that scripts/build.js makes from src/
// (dist/bundle/; `npm ci` and `npm pack` build it).
import module from 'node:module';

// node:fs through require(): an ESM import of it would load fs/promises and the streams stack
// (its lazy exports), a tenth of a hook command's run (see scripts/build.js).
const { existsSync, realpathSync } = module.createRequire(import.meta.url)('node:fs');

const root = new URL('..', import.meta.url);

// In a checkout, `npx agentbus` puts the checkout's node_modules/.bin first on PATH, so this
// script would run under the Node 22 that `npm ci` installs for the tests, while a harness
// running `node .../bin/agentbus.js` gets the machine's Node: the two would pick different
// drivers. Hand over to the Node that runs npx (the user's) before anything is loaded.
// npm_command is dropped so the new process does not hand over again.
if (process.env.npm_command === 'exec' && typeof process.execve === 'function') {
  const userNode = process.env.npm_node_execpath;
  try {
    const ours = realpathSync(process.execPath);
    if (userNode && ours.startsWith(`${realpathSync(new URL('node_modules', root))}/`) && realpathSync(userNode) !== ours) {
      const env = { ...process.env };
      delete env.npm_command;
      process.execve(userNode, [userNode, ...process.execArgv, ...process.argv.slice(1)], env);
    }
  } catch {
    // No node_modules here (an installed package) or no such Node: run as we are.
  }
}

const entry = new URL('dist/bundle/agentbus.js', root);
if (!existsSync(entry)) {
  process.stderr.write(`agentbus: not built yet: run \`npm ci\` (or \`npm run build\`) in ${root.pathname}\n`);
  process.exit(1);
}
// Cached compiled code makes every harness start faster; missing on Node 20, harmless.
module.enableCompileCache?.();
const { runFromProcess } = await import(entry.href);
await runFromProcess();
