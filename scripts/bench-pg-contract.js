#!/usr/bin/env node
// The evidence behind the driver contract for an asynchronous engine
// (docs/architecture.md, "An asynchronous engine"), in one run:
//   sqlite   each SQLite driver through agentbus's own Database: a write
//            transaction (insert, read back, update) and three point reads,
//            called as today's synchronous core calls them and awaited
//            statement by statement as an async core would
//   postgres a throwaway cluster (scripts/pg-cluster.js): `SELECT 1` and the
//            same write transaction, called with `await` on a pg client and
//            through a synchronous bridge (a worker thread holding the client,
//            the caller blocked in Atomics.wait)
//   npm run bench:pg-contract -- [--n 2000] [--only sqlite,postgres]
// Run it with Node 22 (npm run puts it first on PATH) so both SQLite drivers load.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { flag } from './bench-args.js';

const N = Number(flag('n', '2000'));
const ONLY = flag('only', 'sqlite,postgres').split(',');
const CHILD_DRIVER = flag('child-driver', undefined);
const self = fileURLToPath(import.meta.url);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;

/**
 * Times each function of `fns` N times after N/4 warm-up rounds, interleaved
 * (one call of each per round, the order turned every round) so that a
 * machine whose load changes during the run weighs on every case alike.
 * Resolves to per-call milliseconds, keyed like `fns`.
 */
async function timeInterleaved(fns) {
  const names = Object.keys(fns);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < N + N / 4; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const t = performance.now();
      await fns[name]();
      if (round >= N / 4) times[name].push(performance.now() - t);
    }
  }
  return times;
}

/** In a child process: one SQLite driver, synchronous calls against awaited ones. */
async function sqliteChild(driver) {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentbus-contract-'));
  const { openDatabase } = await import('../dist/src/db/open/open-database.js');
  const { db } = await openDatabase({ dataDir, driver });
  db.exec('CREATE TABLE c (id INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0)');
  for (let i = 0; i < 100; i++) db.run('INSERT INTO c (v) VALUES (?)', ['seed ' + i]);
  // Both forms open the transaction the same way, so the difference is the awaits alone.
  const writeSync = () => {
    db.exec('BEGIN IMMEDIATE');
    const id = db.run('INSERT INTO c (v) VALUES (?)', ['x']).lastInsertRowid;
    db.get('SELECT v FROM c WHERE id = ?', [id]);
    db.run('UPDATE c SET n = n + 1 WHERE id = ?', [id]);
    db.exec('COMMIT');
  };
  // What an async core would do: the same statements, each behind an await,
  // inside BEGIN IMMEDIATE ... COMMIT that the core then has to hold across them.
  const writeAsync = async () => {
    await db.exec('BEGIN IMMEDIATE');
    const id = (await db.run('INSERT INTO c (v) VALUES (?)', ['x'])).lastInsertRowid;
    await db.get('SELECT v FROM c WHERE id = ?', [id]);
    await db.run('UPDATE c SET n = n + 1 WHERE id = ?', [id]);
    await db.exec('COMMIT');
  };
  const readSync = () => {
    for (const id of [3, 30, 60]) db.get('SELECT v FROM c WHERE id = ?', [id]);
  };
  const readAsync = async () => {
    for (const id of [3, 30, 60]) await db.get('SELECT v FROM c WHERE id = ?', [id]);
  };
  const times = await timeInterleaved({ writeSync, writeAsync, readSync, readAsync });
  const out = Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, pct(xs, 50)]));
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(out) + '\n');
}

async function sqliteSection() {
  const { loadDriver } = await import('../dist/src/db/open/select-driver.js');
  console.log('\nSQLite through agentbus Database, p50 per call (fresh process per driver):');
  console.log('driver | write tx sync | write tx awaited | x | 3 reads sync | 3 reads awaited | x');
  for (const driver of ['native', 'wasm']) {
    const loaded = await loadDriver(driver);
    if (!loaded.ok) {
      console.log(`${driver} | skipped: ${loaded.reason}`);
      continue;
    }
    const out = execFileSync(process.execPath, [self, '--child-driver', driver, '--n', String(N)], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1));
    console.log(
      `${driver} | ${us(r.writeSync)} | ${us(r.writeAsync)} | ${(r.writeAsync / r.writeSync).toFixed(2)} | ${us(r.readSync)} | ${us(r.readAsync)} | ${(r.readAsync / r.readSync).toFixed(2)}`,
    );
  }
}

/** A pg client on a worker thread, called synchronously. */
function startBridge(url) {
  const flagWord = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./pg-bridge-worker.js', import.meta.url), {
    workerData: { flag: flagWord, url, port: port2 },
    transferList: [port2],
  });
  const wait = () => {
    if (Atomics.wait(flagWord, 0, 0, 10_000) === 'timed-out') throw new Error('the bridge did not answer within 10 s');
    Atomics.store(flagWord, 0, 0);
    const reply = receiveMessageOnPort(port1).message;
    if (reply.error) throw new Error(`${reply.error.code}: ${reply.error.message}`);
    return reply;
  };
  wait();
  const query = (sql, params = []) => {
    port1.postMessage({ sql, params });
    return wait();
  };
  return { query, close: () => worker.terminate() };
}

async function postgresSection() {
  const { startCluster } = await import('./pg-cluster.js');
  const pg = (await import('pg')).default;
  const cluster = await startCluster();
  process.once('exit', cluster.stop);
  try {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    await client.query('CREATE TABLE c (id bigserial PRIMARY KEY, v text NOT NULL, n integer NOT NULL DEFAULT 0)');
    const bridge = startBridge(cluster.url);
    const writeTx = async (q) => {
      await q('BEGIN');
      await q('SELECT pg_advisory_xact_lock(1)'); // the single writer SQLite's BEGIN IMMEDIATE gives
      const id = (await q('INSERT INTO c (v) VALUES ($1) RETURNING id', ['x'])).rows[0].id;
      await q('SELECT v FROM c WHERE id = $1', [id]);
      await q('UPDATE c SET n = n + 1 WHERE id = $1', [id]);
      await q('COMMIT');
    };
    const cases = {
      'SELECT 1, awaited': () => client.query('SELECT 1'),
      'SELECT 1, sync bridge': async () => bridge.query('SELECT 1'),
      'write tx (6 round trips), awaited': () => writeTx((sql, params) => client.query(sql, params)),
      'write tx (6 round trips), sync bridge': () => writeTx(async (sql, params) => bridge.query(sql, params)),
    };
    console.log(`\nPostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version} over 127.0.0.1 TCP, per call:`);
    console.log('case | p50 | p99');
    const times = await timeInterleaved(cases);
    for (const [name, xs] of Object.entries(times)) console.log(`${name} | ${pct(xs, 50).toFixed(3)} ms | ${pct(xs, 99).toFixed(3)} ms`);
    await client.end();
    await bridge.close();
  } finally {
    cluster.stop();
  }
}

if (CHILD_DRIVER !== undefined) {
  await sqliteChild(CHILD_DRIVER);
} else {
  console.log(`bench:pg-contract, ${N} calls per case, load average ${loadavg()[0].toFixed(2)} at start`);
  if (ONLY.includes('sqlite')) await sqliteSection();
  if (ONLY.includes('postgres')) await postgresSection();
}
