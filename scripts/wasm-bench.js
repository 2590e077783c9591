#!/usr/bin/env node
// Driver-level benchmark of the wasm driver beside native node:sqlite, no core
// in between. Build first (npx tsc -p tsconfig.json). Run with Node 22 so both
// drivers load:  node_modules/.bin/node scripts/wasm-bench.js [--commits 10000] [--runs 5]
//   child mode:  scripts/wasm-bench.js --child <driver> <bench> <dir> <n>
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);

async function load(name) {
  const mod =
    name === 'native'
      ? await import('../dist/drivers/native/native-driver.js').then((m) => m.loadNativeDriver())
      : await import('../dist/drivers/wasm/wasm-driver.js').then((m) => m.loadWasmDriver());
  if (!mod.ok) throw new Error(`${name}: ${mod.reason}`);
  return mod.driver;
}

function open(driver, dir) {
  const db = driver.open(join(dir, 'bench.db'), { busyTimeoutMs: 10_000 });
  db.prepare('PRAGMA journal_mode=WAL').get();
  db.exec('PRAGMA synchronous=NORMAL; CREATE TABLE IF NOT EXISTS b (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  return db;
}

/** CPU time (user + system) per operation since `start`, in µs: on a busy machine it moves far less than wall time. */
function cpuUsPer(start, n) {
  const used = process.cpuUsage(start);
  return Math.round(((used.user + used.system) / n) * 100) / 100;
}

if (args[0] === '--child') {
  const [, name, bench, dir, nText] = args;
  const n = Number(nText);
  const t0 = performance.now();
  const driver = await load(name);
  const db = open(driver, dir);
  const openMs = performance.now() - t0;
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const insert = db.prepare('INSERT INTO b (v) VALUES (?)');
  let out;
  if (bench === 'commits') {
    // Warm up (JIT, wasm tier-up, first checkpoint), then measure.
    for (let i = 0; i < 1000; i++) (begin.run(), insert.run(['warm ' + i]), commit.run());
    const s = performance.now();
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) (begin.run(), insert.run(['payload ' + i]), commit.run());
    out = { commitsPerSec: Math.round((n / (performance.now() - s)) * 1000), cpuUsPerCommit: cpuUsPer(c, n) };
  } else if (bench === 'cold') {
    const s = performance.now();
    for (let i = 0; i < n; i++) (begin.run(), insert.run(['payload ' + i]), commit.run());
    out = { coldCommitsPerSec: Math.round((n / (performance.now() - s)) * 1000), openMs: Math.round(openMs) };
  } else if (bench === 'reads') {
    begin.run();
    const put = db.prepare('INSERT OR REPLACE INTO b (id, v) VALUES (?, ?)');
    for (let i = 1; i <= 10_000; i++) put.run([i, 'value ' + i]);
    commit.run();
    const get = db.prepare('SELECT v FROM b WHERE id = ?');
    for (let i = 0; i < 5000; i++) get.get([1 + i]);
    const s = performance.now();
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) if (get.get([1 + ((i * 7919) % 10_000)]) === undefined) throw new Error('missing row');
    out = { readsPerSec: Math.round((n / (performance.now() - s)) * 1000), cpuUsPerRead: cpuUsPer(c, n) };
  } else if (bench === 'writer') {
    for (let i = 0; i < n; i++) (begin.run(), insert.run(['w' + i]), commit.run());
    out = { rows: n };
  }
  db.close();
  process.stdout.write(JSON.stringify({ ...out, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) }) + '\n');
  process.exit(0);
}

const commits = Number((args.includes('--commits') && args[args.indexOf('--commits') + 1]) || 10_000);
// --runs N: repeat every measurement N times, native and wasm interleaved, and report medians.
const runs = Math.max(1, Number((args.includes('--runs') && args[args.indexOf('--runs') + 1]) || 1));
const drivers = [];
for (const name of ['native', 'wasm']) {
  try {
    await load(name);
    drivers.push(name);
  } catch (error) {
    console.log(`(${name} skipped: ${error.message})`);
  }
}

function child(name, bench, n) {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-wasm-bench-'));
  try {
    const out = execFileSync(process.execPath, [self, '--child', name, bench, dir, String(n)], { encoding: 'utf8' });
    return JSON.parse(out.trim().split('\n').at(-1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function write4(name) {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-wasm-bench-'));
  try {
    execFileSync(process.execPath, [self, '--child', name, 'writer', dir, '1']);
    const s = performance.now();
    await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise((resolve, reject) => {
            const c = spawn(process.execPath, [self, '--child', name, 'writer', dir, '500'], { stdio: 'ignore' });
            c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
          }),
      ),
    );
    return { write4Ms: Math.round(performance.now() - s) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `Node ${process.version}; WAL, synchronous=NORMAL, BEGIN IMMEDIATE + 1 INSERT + COMMIT per commit` +
    (runs > 1 ? `; medians of ${runs} runs, drivers interleaved` : ''),
);
const samples = {};
for (let r = 0; r < runs; r++) {
  for (const name of drivers) {
    const one = {
      ...child(name, 'commits', commits),
      ...child(name, 'cold', 5000),
      ...child(name, 'reads', 100_000),
      ...(await write4(name)),
    };
    for (const [k, v] of Object.entries(one)) ((samples[name] ??= {})[k] ??= []).push(v);
  }
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : Math.round((s[m - 1] + s[m]) / 2);
};
const results = {};
for (const name of drivers) {
  results[name] = Object.fromEntries(Object.entries(samples[name]).map(([k, v]) => [k, median(v)]));
  console.log(name.padEnd(7), JSON.stringify(results[name]));
  if (runs > 1) console.log('  all  ', JSON.stringify(samples[name]));
}
if (results.native && results.wasm) {
  const r = (k) => (results.wasm[k] / results.native[k]).toFixed(2);
  console.log(
    `wasm/native: commits ${r('commitsPerSec')}, cold commits ${r('coldCommitsPerSec')}, reads ${r('readsPerSec')}, ` +
      `4x500 wall ${r('write4Ms')}x, open ${r('openMs')}x`,
  );
}
