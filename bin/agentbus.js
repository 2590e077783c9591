#!/usr/bin/env node
// The agentbus executable: runs the bundle that scripts/build.js makes from src/
// (dist/bundle/; `npm ci` and `npm pack` build it). CommonJS, as is the bundle
// (bin/package.json says so while the path stays the one users configured): a
// process that loads no ES module never starts Node's ESM loader, about 15% of
// a hook command's run on Node 20.
'use strict';
const module_ = require('node:module');
const { existsSync, realpathSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');

// In a checkout, `npx agentbus` puts the checkout's node_modules/.bin first on PATH, so this
// script would run under the Node 22 that `npm ci` installs for the tests, while a harness
// running `node .../bin/agentbus.js` gets the machine's Node: the two would pick different
// drivers. Hand over to the Node that runs npx (the user's) before anything is loaded.
// npm_command is dropped so the new process does not hand over again.
if (process.env.npm_command === 'exec' && typeof process.execve === 'function') {
  const userNode = process.env.npm_node_execpath;
  try {
    const ours = realpathSync(process.execPath);
    if (userNode && ours.startsWith(`${realpathSync(join(root, 'node_modules'))}/`) && realpathSync(userNode) !== ours) {
      const env = { ...process.env };
      delete env.npm_command;
      process.execve(userNode, [userNode, ...process.execArgv, ...process.argv.slice(1)], env);
    }
  } catch {
    // No node_modules here (an installed package) or no such Node: run as we are.
  }
}

const entry = join(root, 'dist', 'bundle', 'agentbus.cjs');
if (!existsSync(entry)) {
  process.stderr.write(`agentbus: not built yet: run \`npm ci\` (or \`npm run build\`) in ${root}\n`);
  process.exit(1);
}
// Cached compiled code makes every harness start faster; missing on Node 20, harmless.
module_.enableCompileCache?.();
require(entry)
  .runFromProcess()
  .catch((error) => {
    process.stderr.write(`agentbus: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
