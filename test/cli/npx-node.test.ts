/**
 * In a checkout, `npx agentbus` would run bin/agentbus.js under the Node 22 that
 * `npm ci` installs for the tests (npx puts node_modules/.bin first on PATH),
 * while a harness running `node .../bin/agentbus.js` gets the machine's Node.
 * bin/ hands over to the Node that ran npx, so the two pick the same driver.
 * The Node that "ran npx" is a stand-in script here, which records that it ran.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { REPO_ROOT } from '../install/doc-snippets.js';

/** The Node `npm ci` installs into this checkout: the one npx would run bin/ under. */
const CHECKOUT_NODE = join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');

/** A stand-in for the user's Node: notes its arguments in `log`, then runs the real one. */
function userNode(dir: string): { path: string; log: string } {
  const log = join(dir, 'user-node.log');
  const path = join(dir, 'user-node');
  writeFileSync(path, `#!/bin/sh\necho "$@" >> '${log}'\nexec '${process.execPath}' "$@"\n`);
  chmodSync(path, 0o755);
  return { path, log };
}

function run(env: Record<string, string>, cwd: string) {
  return spawnSync(CHECKOUT_NODE, [AGENTBUS_BIN, 'identity'], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env } });
}

describe('bin/agentbus.js started by npx in a checkout', () => {
  it('hands over to the Node that ran npx, once, and the command runs there', () => {
    expect(existsSync(CHECKOUT_NODE), 'npm ci installs Node 22 into node_modules/node').toBe(true);
    const dir = tempDir();
    const user = userNode(dir);
    const result = run({ npm_command: 'exec', npm_node_execpath: user.path }, dir);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Agentbus: call register with name /);
    expect(readFileSync(user.log, 'utf8').trim().split('\n')).toEqual([`${AGENTBUS_BIN} identity`]);
  });

  it('stays where it is when not started by npx (a harness, the test suite, npm run)', () => {
    const dir = tempDir();
    const user = userNode(dir);
    for (const npmCommand of [undefined, 'test', 'run-script']) {
      const result = run({ npm_node_execpath: user.path, ...(npmCommand === undefined ? {} : { npm_command: npmCommand }) }, dir);
      expect(result.status, result.stderr).toBe(0);
    }
    expect(existsSync(user.log)).toBe(false);
  });
});
