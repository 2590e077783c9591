// One benchmark measurement in a fresh process, so drivers never share a heap
// or a module cache. Prints one JSON line: {"value": n, "unit": "..."}.
//   node scripts/bench-worker.js <bench> <driver> <dataDir> [n]
import { performance } from 'node:perf_hooks';

const [bench, driver, dataDir, nArg] = process.argv.slice(2);
const t0 = performance.now();
const { openDatabase } = await import('../dist/src/db/open/open-database.js');

async function open() {
  return (await openDatabase({ dataDir, driver })).db;
}

function report(value, unit, extra = {}) {
  process.stdout.write(JSON.stringify({ value, unit, rssMiB: process.memoryUsage().rss / 2 ** 20, ...extra }) + '\n');
}

if (bench === 'commits') {
  const n = Number(nArg ?? 5000);
  const db = await open();
  db.exec('CREATE TABLE IF NOT EXISTS b (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const start = performance.now();
  for (let i = 0; i < n; i++) db.transaction(() => db.run('INSERT INTO b (v) VALUES (?)', ['payload ' + i]));
  const ms = performance.now() - start;
  report(Math.round((n / ms) * 1000), 'commits/s');
  db.close();
} else if (bench === 'reads') {
  const n = Number(nArg ?? 50000);
  const db = await open();
  db.exec('CREATE TABLE IF NOT EXISTS r (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  db.transaction(() => {
    for (let i = 1; i <= 10000; i++) db.run('INSERT OR REPLACE INTO r (id, v) VALUES (?, ?)', [i, 'value ' + i]);
  });
  const start = performance.now();
  let found = 0;
  for (let i = 0; i < n; i++) {
    if (db.get('SELECT v FROM r WHERE id = ?', [1 + ((i * 7919) % 10000)]) !== undefined) found++;
  }
  const ms = performance.now() - start;
  if (found !== n) throw new Error(`point reads found ${found} of ${n}`);
  report(Math.round((n / ms) * 1000), 'reads/s');
  db.close();
} else if (bench === 'writer') {
  const n = Number(nArg ?? 500);
  const db = await open();
  db.exec('CREATE TABLE IF NOT EXISTS w (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  for (let i = 0; i < n; i++) db.transaction(() => db.run('INSERT INTO w (v) VALUES (?)', ['w' + i]));
  db.close();
  report(n, 'rows');
} else if (bench === 'writer-on-signal') {
  // The write phase alone: open, say "ready", wait for a line on stdin, commit, say "done".
  const n = Number(nArg ?? 500);
  const db = await open();
  db.exec('CREATE TABLE IF NOT EXISTS w (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  process.stdout.write('ready\n');
  const { once } = await import('node:events');
  process.stdin.setEncoding('utf8');
  await once(process.stdin, 'data');
  for (let i = 0; i < n; i++) db.transaction(() => db.run('INSERT INTO w (v) VALUES (?)', ['w' + i]));
  process.stdout.write('done\n');
  db.close();
  process.stdin.destroy();
} else if (bench === 'paced-writer' || bench === 'waited-writer') {
  // A writer beside another: 'paced-writer' commits, then works 0.9 ms (CPU, as a server between
  // calls), until killed; 'waited-writer' commits n rows 0.5 ms apart and reports how long its
  // BEGIN IMMEDIATEs waited for the other's write lock in all.
  const paced = bench === 'paced-writer';
  const n = Number(nArg ?? 3000);
  const db = await open();
  db.exec('CREATE TABLE IF NOT EXISTS p (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const work = (ms) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  if (paced) process.stdout.write('ready\n');
  let waited = 0;
  const start = performance.now();
  for (let i = 0; paced || i < n; i++) {
    const before = performance.now();
    db.transaction(() => {
      waited += performance.now() - before;
      db.run('INSERT INTO p (v) VALUES (?)', ['p' + i]);
      if (paced) work(0.05);
    });
    work(paced ? 0.9 : 0.5);
  }
  report(Math.round(waited), `ms waited for the lock (${n} commits beside a writer committing every ~1 ms)`, { commitsPerSecond: Math.round((n / (performance.now() - start)) * 1000) });
  db.close();
} else if (bench === 'open') {
  const db = await open();
  db.get('SELECT count(*) AS n FROM messages');
  report(Math.round((performance.now() - t0) * 10) / 10, 'ms');
  db.close();
} else {
  throw new Error(`unknown bench ${bench}`);
}
