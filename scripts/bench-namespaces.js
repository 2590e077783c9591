#!/usr/bin/env node
// Writers of one wasm database outside and inside other pid namespaces (as
// containers and sandboxes make them), and what the lock owners' lease costs:
// this checkout against another (e.g. main before the leases) in one run,
// interleaved, under every Node found (this one, node_modules/node, npm's).
//   node scripts/bench-namespaces.js [--compare <checkout>] [--seconds 15] [--rounds 1] [--runs 5] [--only lost,commits] [--realtime]
// Both checkouts must be built (dist/). `lost` needs root (unshare, nsenter).
//   lost:    3 writers outside and 3 inside ("shared": one other namespace;
//            "each": each in a namespace of its own, all pid 1 there) run the
//            lost-update counter (scripts/bench-counter-writer.js) for --seconds
//            from their open. Lost = acknowledged (logged) commits missing from
//            the file at the end; the file is then checked with node:sqlite
//            (integrity_check). Before leases this lost commits or broke the file.
//   commits: single-row commits/s (scripts/bench-worker.js, 5,000 in a fresh
//            process), medians of --runs, wasm on each Node and native on
//            Node >= 22; the ratios after/before and wasm/native show the
//            cost of the lease on the lock path. --realtime runs each of
//            these processes under `chrt -f 10` (root only), which keeps a
//            busy machine's other work from landing in the measurement.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, hasSwitch } from './bench-args.js';
import { median } from './bench-stats.js';

const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const SECONDS = Number(flag('seconds', '15'));
const ROUNDS = Number(flag('rounds', '1'));
const RUNS = Number(flag('runs', '5'));
const ONLY = flag('only', 'lost,commits').split(',');
const compare = flag('compare', undefined);
const REALTIME = hasSwitch('realtime');

const builds = [{ label: 'this', root: here }];
if (compare !== undefined) builds.push({ label: 'compare', root: resolve(compare) });
for (const b of builds) {
  if (!existsSync(join(b.root, 'dist', 'drivers', 'wasm', 'wasm-driver.js'))) throw new Error(`${b.root} is not built: run \`node scripts/build.js\` there`);
}

function nodeVersion(bin) {
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
}
const nodes = [];
for (const bin of [process.execPath, join(here, 'node_modules', 'node', 'bin', 'node'), process.env.npm_node_execpath]) {
  if (bin === undefined || !existsSync(bin)) continue;
  const version = nodeVersion(bin);
  if (!nodes.some((n) => n.version === version)) nodes.push({ bin, version });
}
nodes.sort((a, b) => a.version.localeCompare(b.version, undefined, { numeric: true }));
const node22 = nodes.find((n) => Number(n.version.slice(1).split('.')[0]) >= 22);

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const dirs = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'agentbus-bench-ns-'));
  dirs.push(d);
  return d;
};
process.on('exit', () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// ---- lost-update counter across pid namespaces ----

const UNSHARE = ['unshare', '--pid', '--fork', '--mount-proc'];

function childPid(pid) {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return kids === '' ? undefined : Number(kids.split(/\s+/)[0]);
  } catch {
    return undefined;
  }
}

/** A pid namespace kept alive by a sleeping init; prefix() runs a command inside it. */
async function sharedNamespace() {
  const unshare = spawn(UNSHARE[0], [...UNSHARE.slice(1), 'sleep', '3600'], { stdio: 'ignore' });
  let init;
  for (let i = 0; i < 500 && init === undefined; i++) {
    await new Promise((r) => setTimeout(r, 10));
    init = childPid(unshare.pid);
  }
  if (init === undefined) throw new Error('unshare started no namespace init');
  return {
    prefix: () => ['nsenter', '--target', String(init), '--pid', '--mount'],
    kill: () => {
      try {
        process.kill(init, 'SIGKILL');
      } catch {
        // gone already
      }
      unshare.kill('SIGKILL');
    },
  };
}

function createCounterDb(build, node, dbPath) {
  const script = `
    const { loadWasmDriver } = await import(process.argv[1]);
    const loaded = await loadWasmDriver();
    if (!loaded.ok) throw new Error(loaded.reason);
    const db = loaded.driver.open(process.argv[2], { busyTimeoutMs: 10000 });
    db.exec('PRAGMA journal_mode=WAL');
    db.exec('CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0);' +
      'CREATE TABLE incs (writer TEXT NOT NULL, seq INTEGER NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (writer, seq));');
    db.close();`;
  execFileSync(node.bin, ['--input-type=module', '-e', script, join(build.root, 'dist', 'drivers', 'wasm', 'wasm-driver.js'), dbPath], { stdio: 'inherit' });
}

function startWriter(build, node, dbPath, dir, id, prefix) {
  const log = join(dir, `${id}.log`);
  const command = [...prefix, node.bin, join(here, 'scripts', 'bench-counter-writer.js'), join(build.root, 'dist', 'drivers', 'wasm', 'wasm-driver.js'), dbPath, log, String(SECONDS * 1000), id];
  const proc = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const hang = setTimeout(() => proc.kill('SIGKILL'), (SECONDS + 90) * 1000);
  const exited = new Promise((r) =>
    proc.on('exit', (code, signal) => {
      clearTimeout(hang);
      r({ id, log, code, signal, out });
    }),
  );
  return exited;
}

/** What node:sqlite finds in the file: integrity, the counter, and which logged commits are missing. */
function inspect(dbPath, writers) {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const { existsSync, readFileSync } = require('node:fs');
    const [dbPath, writersJson] = process.argv.slice(1);
    const out = { logged: 0, lost: 0 };
    try {
      const db = new DatabaseSync(dbPath);
      out.integrity = db.prepare('PRAGMA integrity_check(5)').all().map((r) => r.integrity_check).join('; ');
      out.counter = db.prepare('SELECT n FROM counter').get().n;
      out.rows = db.prepare('SELECT count(*) AS c FROM incs').get().c;
      const has = db.prepare('SELECT 1 AS x FROM incs WHERE writer = ? AND seq = ?');
      for (const w of JSON.parse(writersJson)) {
        const seqs = existsSync(w.log) ? readFileSync(w.log, 'utf8').split('\\n').filter(Boolean).map(Number) : [];
        out.logged += seqs.length;
        for (const s of seqs) if (has.get(w.id, s) === undefined) out.lost++;
      }
      db.close();
    } catch (error) {
      out.error = error.message;
      for (const w of JSON.parse(writersJson)) out.logged += existsSync(w.log) ? readFileSync(w.log, 'utf8').split('\\n').filter(Boolean).length : 0;
    }
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(node22.bin, ['--no-warnings', '-e', script, dbPath, JSON.stringify(writers)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) return { error: r.stderr.trim() || `exit ${r.status}` };
  return JSON.parse(r.stdout);
}

async function lostRun(build, node, shape) {
  const dir = fresh();
  const dbPath = join(dir, 'counter.db');
  createCounterDb(build, node, dbPath);
  const ns = shape === 'shared' ? await sharedNamespace() : undefined;
  try {
    const inside = () => (ns === undefined ? [...UNSHARE] : ns.prefix());
    const runs = await Promise.all([
      ...[0, 1, 2].map((i) => startWriter(build, node, dbPath, dir, `out${i}`, [])),
      ...[0, 1, 2].map((i) => startWriter(build, node, dbPath, dir, `in${i}`, inside())),
    ]);
    const found = inspect(dbPath, runs.map((r) => ({ id: r.id, log: r.log })));
    const failed = runs
      .filter((r) => r.code !== 0)
      .map((r) => {
        const last = r.out.trim().split('\n').at(-1) ?? '';
        try {
          return `${r.id}: ${JSON.parse(last).error}`;
        } catch {
          return `${r.id}: ${r.signal ?? `exit ${r.code}`} ${last.slice(0, 120)}`;
        }
      });
    return { ...found, failed };
  } finally {
    ns?.kill();
  }
}

function lostCell(r) {
  const short = (text) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > 140 ? `${flat.slice(0, 140)}...` : flat;
  };
  const state = r.error !== undefined ? `file unreadable: ${short(r.error)}` : r.integrity === 'ok' ? 'integrity ok' : `integrity: ${short(r.integrity)}`;
  const failed = r.failed.length === 0 ? '' : `; ${r.failed.length} writer(s) failed (${short(r.failed[0])})`;
  const n = (x) => (x ?? 0).toLocaleString('en-US');
  const lost = r.error !== undefined ? `${n(r.logged)} acknowledged` : `${n(r.lost)} of ${n(r.logged)} lost`;
  return `${lost}, ${state}${failed}`;
}

// ---- commits/s: the lease on the lock path ----

function commitsPerSecond(build, node, driver) {
  const dir = fresh();
  const argv = [join(build.root, 'scripts', 'bench-worker.js'), 'commits', driver, dir, '5000'];
  // chrt execs the command: no process in between.
  const out = REALTIME ? execFileSync('chrt', ['-f', '10', node.bin, ...argv], { encoding: 'utf8' }) : execFileSync(node.bin, argv, { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)).value;
}

// ---- run ----

console.log(
  `bench-namespaces: ${builds.map((b) => `${b.label} = ${b.root}`).join(', ')}; Node ${nodes.map((n) => n.version).join(', ')}; ` +
    `${cpus().length} cores, load ${load()}`,
);

if (ONLY.includes('lost')) {
  if (node22 === undefined) throw new Error('the lost phase checks the file with node:sqlite: it needs a Node >= 22 (npm ci installs one)');
  const probe = spawnSync(UNSHARE[0], [...UNSHARE.slice(1), 'true']);
  if (probe.status !== 0) {
    console.log(`lost: skipped: \`${UNSHARE.join(' ')}\` is refused here (needs root)`);
  } else {
    const rows = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const node of nodes) {
        for (const shape of ['shared', 'each']) {
          const cells = [];
          // Alternate which build goes first, so neither always runs on the busier half.
          const order = round % 2 === 0 ? builds : [...builds].reverse();
          const byLabel = {};
          for (const build of order) {
            const r = await lostRun(build, node, shape);
            byLabel[build.label] = r;
            console.log(`  ${shape}, Node ${node.version}, ${build.label}: ${lostCell(r)} (load ${load()})`);
          }
          for (const b of builds) cells.push(lostCell(byLabel[b.label]));
          rows.push(`| ${shape}, ${SECONDS} s, Node ${node.version} | ${cells.join(' | ')} |`);
        }
      }
    }
    console.log(`\n| run | ${builds.map((b) => b.label).join(' | ')} |\n|---|${builds.map(() => '---').join('|')}|`);
    for (const r of rows) console.log(r);
  }
}

if (ONLY.includes('commits')) {
  const cases = [];
  for (const node of nodes) cases.push({ node, driver: 'wasm' });
  if (node22 !== undefined) cases.push({ node: node22, driver: 'native' });
  const results = new Map();
  for (let run = 0; run < RUNS; run++) {
    const order = run % 2 === 0 ? builds : [...builds].reverse();
    for (const c of cases) {
      for (const build of order) {
        const key = `${c.driver} ${c.node.version} ${build.label}`;
        if (!results.has(key)) results.set(key, []);
        results.get(key).push(commitsPerSecond(build, c.node, c.driver));
      }
    }
  }
  const med = (driver, node, label) => median(results.get(`${driver} ${node.version} ${label}`));
  console.log(`\ncommits/s, median of ${RUNS} fresh processes each (5,000 single-row commits)${REALTIME ? ', real-time priority (chrt -f 10)' : ''}, load ${load()}`);
  console.log(`| driver, Node | ${builds.map((b) => b.label).join(' | ')}${builds.length > 1 ? ' | this/compare' : ''} | wasm/native (${builds.map((b) => b.label).join(', ')}) |`);
  console.log(`|---|${builds.map(() => '---').join('|')}${builds.length > 1 ? '|---' : ''}|---|`);
  for (const c of cases) {
    const vals = builds.map((b) => med(c.driver, c.node, b.label));
    const ratio = builds.length > 1 ? ` | ${(vals[0] / vals[1]).toFixed(2)}` : '';
    const vsNative =
      c.driver === 'wasm' && node22 !== undefined ? builds.map((b) => (med('wasm', c.node, b.label) / med('native', node22, b.label)).toFixed(2)).join(', ') : '-';
    console.log(`| ${c.driver}, ${c.node.version} | ${vals.map((v) => Math.round(v).toLocaleString('en-US')).join(' | ')}${ratio} | ${vsNative} |`);
  }
  console.log(`all runs: ${[...results].map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ')}`);
}
