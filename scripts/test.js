#!/usr/bin/env node
// The test command (`npm test`): the whole suite once per driver under Node 22,
// and the wasm driver again under the machine's own Node when that is older
// (Node 20 has no node:sqlite; wasm is the driver it runs). Prints per-run
// totals and a closing "N passed, N failed" line. First the type check of
// src/, drivers/ and test/ in one program (tsconfig.test.json): vitest
// strips types without checking them, so a type error in a test would
// otherwise go unnoticed. The package is packed and installed from its tarball
// once, before the runs (test/package/ tests it).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAndInstall } from './pack-install.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** Drivers that exist; a driver joins this list when its whole suite passes. */
const DRIVERS = ['native', 'wasm'];

function nodeMajor(bin) {
  return Number(execFileSync(bin, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
}

function findNode22() {
  const local = join(root, 'node_modules', 'node', 'bin', 'node');
  for (const bin of [process.execPath, local]) {
    if (existsSync(bin) && nodeMajor(bin) >= 22) return bin;
  }
  throw new Error('no Node >= 22 found: run `npm ci` (it installs Node 22 as a dev dependency)');
}

const node22 = findNode22();
const systemNode = process.env.npm_node_execpath ?? process.execPath;
const runs = [{ node: node22, drivers: DRIVERS }];
if (nodeMajor(systemNode) < 22 && DRIVERS.includes('wasm')) runs.push({ node: systemNode, drivers: ['wasm'] });
// The postgres driver's project (vitest.config.ts): the suite but the files test/postgres/not-on-postgres.ts lists,
// against a throwaway cluster its set-up starts from the PostgreSQL server programs (.ci/run installs
// Debian's postgresql; scripts/pg-cluster.js finds them). It joins DRIVERS when that list has no pending entry.
runs.push({ node: node22, drivers: ['postgres'] });

// One program over src/, drivers/ and test/ (checking tsconfig.json as well
// would check src/ a second time), in this process's Node; a type error ends
// the run here, with tsc's output.
const tsc = require.resolve('typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.test.json'], { cwd: root, stdio: 'inherit' });
if (check.status !== 0) {
  console.error('\ntype check failed (tsc -p tsconfig.test.json): fix the errors above; no test ran');
  process.exit(1);
}

const extra = process.argv.slice(2);
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const out = mkdtempSync(join(tmpdir(), 'agentbus-results-'));
// Installed with the machine's own npm and Node: what a user of that Node gets.
const packed = packAndInstall(join(out, 'package'), { node: systemNode });
const packedFile = join(out, 'packed-install.json');
writeFileSync(packedFile, JSON.stringify(packed));
const totals = [];

// Which tests failed, with the head of each error, repeated beside the totals:
// a CI log is often read from its tail only, far below the reporter's own
// account of the failure.
function failuresOf(json) {
  const lines = [];
  for (const file of json.testResults ?? []) {
    const name = file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const head = String(test.failureMessages?.[0] ?? '').split('\n').slice(0, 4).join(' | ').slice(0, 600);
      lines.push(`${name} > ${test.fullName}: ${head}`);
    }
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) {
      lines.push(`${name}: ${String(file.message ?? 'the file failed to run').split('\n').slice(0, 4).join(' | ').slice(0, 600)}`);
    }
  }
  return lines;
}
let failedRuns = 0;

for (const { node, drivers } of runs) {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  for (const driver of drivers) {
    const report = join(out, `${driver}-${version}.json`);
    console.log(`\n=== ${driver} driver on Node ${version} ===`);
    const result = spawnSync(
      node,
      [vitest, 'run', '--project', driver, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra],
      {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, AGENTBUS_TEST_DRIVERS: driver, AGENTBUS_TEST_BUILT: '1', AGENTBUS_TEST_PACKAGE: packedFile, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
      },
    );
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let failures = [];
    if (existsSync(report)) {
      const json = JSON.parse(readFileSync(report, 'utf8'));
      passed = json.numPassedTests;
      failed = json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0);
      skipped = json.numPendingTests + json.numTodoTests;
      failures = failuresOf(json);
    }
    if (result.status !== 0 && failed === 0) failed = 1; // the run itself broke
    if (result.status !== 0) failedRuns++;
    totals.push({ label: `${driver} on Node ${version}`, passed, failed, skipped, failures });
  }
}
rmSync(out, { recursive: true, force: true });

console.log('\n=== totals ===');
for (const t of totals) {
  console.log(`${t.label}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  for (const f of t.failures) console.log(`  FAILED ${f}`);
}
const sum = (k) => totals.reduce((n, t) => n + t[k], 0);
console.log(`${sum('passed')} passed, ${sum('failed')} failed`);
process.exit(failedRuns > 0 || sum('passed') === 0 ? 1 : 0);
