#!/usr/bin/env node
// Driver benchmarks, every available driver in one run, side by side:
// medians of several fresh-process runs and the wasm/native ratio.
//   npm run bench -- [--runs 5] [--only commits,reads,write4,open]
// Run it with Node 22 (npm run puts it first on PATH) so both drivers load.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const worker = join(here, 'bench-worker.js');
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const runs = Number(flag('runs', '5'));
const only = flag('only', 'commits,reads,write4,open').split(',');

const { loadDriver } = await import('../dist/src/db/select-driver.js');
const drivers = [];
for (const name of ['native', 'wasm']) {
  const r = await loadDriver(name);
  if (r.ok) drivers.push(name);
  else console.log(`(${name} skipped: ${r.reason})`);
}

function runWorker(bench, driver, dir, n) {
  const out = execFileSync(process.execPath, [worker, bench, driver, dir, ...(n ? [String(n)] : [])], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1));
}

function fresh() {
  return mkdtempSync(join(tmpdir(), 'agentbus-bench-'));
}

async function write4(driver) {
  return inFreshDir(async (dir) => {
    runWorker('open', driver, dir); // create the database first: measure writing, not creating
    const start = performance.now();
    await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise((resolve, reject) => {
            const child = spawn(process.execPath, [worker, 'writer', driver, dir, '500'], { stdio: 'ignore' });
            child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
          }),
      ),
    );
    return { value: Math.round(performance.now() - start), unit: 'ms (4 procs x 500 commits)' };
  });
}

/** Runs `fn` on a fresh data directory, removed afterwards. */
async function inFreshDir(fn) {
  const dir = fresh();
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const BENCHES = {
  commits: { run: (d) => inFreshDir((dir) => runWorker('commits', d, dir, 5000)) },
  reads: { run: (d) => inFreshDir((dir) => runWorker('reads', d, dir, 50000)) },
  write4: { run: write4 },
  open: {
    // Created first, so this measures opening an existing database.
    run: (d) => inFreshDir((dir) => (runWorker('open', d, dir), runWorker('open', d, dir))),
  },
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

console.log(`Node ${process.version}, ${runs} runs each, medians`);
const rows = [];
for (const name of only) {
  const bench = BENCHES[name];
  if (bench === undefined) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(BENCHES).join(', ')}`);
  const row = { name, unit: '' };
  for (const d of drivers) {
    const values = [];
    const rss = [];
    for (let i = 0; i < runs; i++) {
      const r = await bench.run(d);
      values.push(r.value);
      if (r.rssMiB) rss.push(r.rssMiB);
      row.unit = r.unit;
    }
    row[d] = median(values);
    if (rss.length) row[`${d}Rss`] = median(rss);
  }
  rows.push(row);
  const ratio = row.native && row.wasm ? (row.wasm / row.native).toFixed(2) : '-';
  const rss = drivers.map((d) => (row[`${d}Rss`] ? `${d} ${row[`${d}Rss`].toFixed(0)} MiB` : '')).filter(Boolean).join(', ');
  console.log(`${name.padEnd(8)} ${drivers.map((d) => `${d}=${row[d]}`).join('  ')}  wasm/native=${ratio}  ${row.unit}${rss ? `  rss: ${rss}` : ''}`);
}
