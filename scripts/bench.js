#!/usr/bin/env node
// Driver benchmarks, every available driver in one run, side by side:
// medians of several fresh-process runs and the wasm/native ratio.
//   npm run bench -- [--runs 5] [--only commits,reads,write4,start4,write4phase,open,beside]
// Run it with Node 22 (npm run puts it first on PATH) so both drivers load.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { flag } from './bench-args.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const worker = join(here, 'bench-worker.js');
const runs = Number(flag('runs', '5'));
const only = flag('only', 'commits,reads,write4,start4,write4phase,open,beside').split(',');

const { loadDriver } = await import('../dist/src/db/open/select-driver.js');
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

/** Four writer processes at once, from spawn to exit: start-up, open, `commits` each, close. */
function write4(commits) {
  return (driver) =>
    inFreshDir(async (dir) => {
      runWorker('open', driver, dir); // create the database first: measure writing, not creating
      const start = performance.now();
      await Promise.all(
        [0, 1, 2, 3].map(
          () =>
            new Promise((resolve, reject) => {
              const child = spawn(process.execPath, [worker, 'writer', driver, dir, String(commits)], { stdio: 'ignore' });
              child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
            }),
        ),
      );
      return { value: Math.round(performance.now() - start), unit: `ms (4 procs x ${commits} commits, spawn to exit)` };
    });
}

/** Four writers opened first; the clock runs from one start signal until all four have committed 500 rows. */
async function write4Phase(driver) {
  return inFreshDir(async (dir) => {
    runWorker('open', driver, dir);
    const children = [0, 1, 2, 3].map(() => spawn(process.execPath, [worker, 'writer-on-signal', driver, dir, '500'], { stdio: ['pipe', 'pipe', 'inherit'] }));
    const said = (child, word) =>
      new Promise((resolve, reject) => {
        let out = '';
        const onData = (d) => {
          out += d;
          if (out.includes(`${word}\n`)) {
            child.stdout.off('data', onData);
            resolve();
          }
        };
        child.stdout.setEncoding('utf8').on('data', onData);
        child.once('exit', (code) => reject(new Error(`writer exited ${code} before saying ${word}`)));
      });
    await Promise.all(children.map((c) => said(c, 'ready')));
    const done = Promise.all(children.map((c) => said(c, 'done')));
    const start = performance.now();
    for (const c of children) c.stdin.end('go\n');
    await done;
    const value = Math.round(performance.now() - start);
    await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
    return { value, unit: 'ms (4 procs x 500 commits, write phase only)' };
  });
}

/** A writer beside another process that commits about every millisecond: the time its BEGINs waited in all. */
function beside(driver) {
  return inFreshDir(async (dir) => {
    runWorker('open', driver, dir);
    const other = spawn(process.execPath, [worker, 'paced-writer', driver, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve, reject) => {
        other.stdout.setEncoding('utf8').on('data', (d) => d.includes('ready') && resolve());
        other.once('exit', (code) => reject(new Error(`the paced writer exited ${code}`)));
      });
      return runWorker('waited-writer', driver, dir, 3000);
    } finally {
      other.kill();
    }
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
  write4: { run: write4(500) },
  // Start-up alone: the same four processes with no commits.
  start4: { run: write4(0) },
  write4phase: { run: write4Phase },
  beside: { run: beside },
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
