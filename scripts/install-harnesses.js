#!/usr/bin/env node
// Installs the real harnesses the tests in test/harnesses/ drive (Claude Code,
// Codex, Gemini CLI, at the versions pinned in scripts/harness-versions.json)
// into a cache folder outside node_modules: about 740 MB, so once per machine
// and version set, not per checkout. The folder is AGENTBUS_HARNESS_DIR, or
// ~/.cache/agentbus/harnesses/<hash of the pins>. A finished install leaves
// installed.json there; a later run with the same pins does nothing.
//   node scripts/install-harnesses.js [--print-dir]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { harnessDir, HARNESS_VERSIONS } from './harness-dir.js';

const dir = harnessDir();
if (process.argv.includes('--print-dir')) {
  console.log(dir);
  process.exit(0);
}
const marker = join(dir, 'installed.json');
if (existsSync(marker) && readFileSync(marker, 'utf8') === JSON.stringify(HARNESS_VERSIONS)) {
  console.log(`harnesses already installed in ${dir}`);
  process.exit(0);
}
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, description: 'agentbus test harnesses (scripts/install-harnesses.js)' }));
const specs = Object.entries(HARNESS_VERSIONS).map(([name, version]) => `${name}@${version}`);
console.log(`installing ${specs.join(', ')} into ${dir}`);
const started = Date.now();
// The npm this script runs under; npm_execpath is set when run through `npm run`.
const npm = process.env.npm_execpath;
const result = npm
  ? spawnSync(process.execPath, [npm, 'install', '--no-audit', '--no-fund', '--no-save', ...specs], { cwd: dir, stdio: 'inherit' })
  : spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...specs], { cwd: dir, stdio: 'inherit' });
if (result.status !== 0) {
  console.error(`npm install of the harnesses failed (exit ${result.status}); nothing is marked installed`);
  process.exit(1);
}
for (const bin of ['claude', 'codex', 'gemini']) {
  const path = join(dir, 'node_modules', '.bin', bin);
  const check = spawnSync(path, ['--version'], { encoding: 'utf8', env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` } });
  if (check.status !== 0) {
    console.error(`${bin} --version failed after the install: ${check.stderr}`);
    process.exit(1);
  }
  console.log(`${bin}: ${check.stdout.trim()}`);
}
writeFileSync(marker, JSON.stringify(HARNESS_VERSIONS));
console.log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
