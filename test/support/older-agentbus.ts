/**
 * A build of an earlier agentbus from this repository's history, to run
 * beside the current one on one database (users upgrade while sessions of
 * the older version keep running). The commit is exported with `git archive`
 * into a directory under the system temp dir, given this checkout's
 * node_modules, and bundled with its own scripts/build.js (esbuild only: a
 * second or two). The build is kept there, keyed by commit, so later files
 * and runs reuse it; it is made in a fresh directory and renamed into place,
 * so two test processes building at once both end with a complete build.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The last commit before migrations 0007-0008: schema 6, sessions and reservations without process identities. */
export const SCHEMA_6_COMMIT = '0e4b6eedbaa13d05dd48079a43556d55f403a27b';

const checkout = fileURLToPath(new URL('../..', import.meta.url));

/** The path of bin/agentbus.js of a build of `commit`, building it the first time. */
export function olderAgentbus(commit: string): string {
  const dir = join(tmpdir(), `agentbus-release-${commit.slice(0, 12)}`);
  const bin = join(dir, 'bin', 'agentbus.js');
  if (existsSync(join(dir, 'dist', 'bundle', 'mcp.js'))) return bin;
  try {
    execFileSync('git', ['-C', checkout, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`commit ${commit} is not in this clone's history (a shallow clone?): run \`git fetch --unshallow\` to test against the older release`);
  }
  const staging = mkdtempSync(join(tmpdir(), 'agentbus-release-build-'));
  try {
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', checkout, commit, staging], { stdio: ['ignore', 'ignore', 'pipe'] });
    symlinkSync(realpathSync(join(checkout, 'node_modules')), join(staging, 'node_modules'));
    execFileSync(process.execPath, [join(staging, 'scripts', 'build.js'), '--skip-tsc'], { cwd: staging, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      renameSync(staging, dir);
    } catch (error) {
      // Another test process put its build there first: use that one.
      if (!existsSync(join(dir, 'dist', 'bundle', 'mcp.js'))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return bin;
}
