// The package as users get it: `npm pack` of this checkout, installed from the
// tarball into a fresh project with npm's ordinary install (install scripts
// allowed, so one that sneaks in shows up). Used by scripts/test.js and the
// test suite's global setup (test/package/), and by scripts/bench-startup.js.
//   node scripts/pack-install.js <dir>   (prints the JSON result)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The npm to use: the one running this script under `npm run`/`npm test`
 * (npm_execpath), else the npm beside `node`, run by that same node.
 */
export function npmCommand(node = process.execPath) {
  const fromEnv = process.env.npm_execpath;
  if (fromEnv !== undefined && /npm-cli\.js$/.test(fromEnv) && existsSync(fromEnv)) return [node, [fromEnv]];
  const beside = join(dirname(node), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  if (existsSync(beside)) return [node, [beside]];
  return ['npm', []];
}

/**
 * Packs the checkout (already built: scripts are skipped, `npm pack` would
 * rebuild) into `dir` and installs the tarball into `dir`/project. Returns the
 * tarball, the project, the installed package's directory and npm's output.
 */
export function packAndInstall(dir, { node = process.execPath } = {}) {
  if (!existsSync(join(root, 'dist', 'bundle', 'agentbus.cjs'))) throw new Error('pack-install: build first (npm run build)');
  mkdirSync(dir, { recursive: true });
  const [npm, npmArgs] = npmCommand(node);
  const env = {
    ...process.env,
    // A cache of its own: what the install needs must come from the tarball, not from this machine's cache.
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_loglevel: 'warn',
  };
  for (const key of Object.keys(env)) if (/^npm_(lifecycle|package)_/.test(key)) delete env[key];
  execFileSync(npm, [...npmArgs, 'pack', '--ignore-scripts', '--pack-destination', dir], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')));
  const project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{"name":"agentbus-install-test","version":"1.0.0","private":true}\n');
  const install = spawnSync(npm, [...npmArgs, 'install', tarball], { cwd: project, env, encoding: 'utf8' });
  if (install.status !== 0) throw new Error(`npm install ${tarball} failed (${install.status}): ${install.stderr}`);
  return {
    tarball,
    project,
    packageDir: join(project, 'node_modules', 'agentbus-mcp'),
    installOutput: `${install.stdout}${install.stderr}`,
    nodeVersion: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (dir === undefined) throw new Error('usage: node scripts/pack-install.js <dir>');
  console.log(JSON.stringify(packAndInstall(resolve(dir)), null, 2));
}
