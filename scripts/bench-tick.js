#!/usr/bin/env node
// Benchmark of one maintenance tick over a large database.
//
//   node scripts/bench-tick.js [--driver native|wasm] [--messages 200000] [--lock-target ms]
//
// Builds a database of --messages ordinary messages, half of them older than
// message_retention_hours, then runs maintenance ticks (real lease, real
// chunked deletes) until retention has nothing left, while a sender in
// another OS process commits one message per write transaction every 5 ms.
// Reports the tick time, the longest single write transaction of the tick
// (the writer-lock hold a sender can wait behind; target < 50 ms), and the
// sender's commit latency (p50/p99/max) during the ticks and when idle.
// Needs a build first: npx tsc -p tsconfig.json
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { systemClock } from '../dist/src/clock.js';
import { loadConfig } from '../dist/src/config.js';
import { openDatabase } from '../dist/src/db/open/open-database.js';
import { createMemoryLogger } from '../dist/src/log.js';
import { createMaintenance } from '../dist/src/maintenance/tick.js';

const HOUR = 3_600_000;
const { values } = parseArgs({
  options: {
    driver: { type: 'string', default: 'native' },
    messages: { type: 'string', default: '200000' },
    child: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'lock-target': { type: 'string' },
  },
});
if (values.driver !== 'native' && values.driver !== 'wasm') throw new Error('--driver must be native or wasm');
const driver = values.driver;

const vocabulary = Array.from({ length: 20_000 }, (_, i) => `term${i.toString(36)}`);
function content(i) {
  const words = [];
  for (let j = 0; j < 30; j++) words.push(vocabulary[(i * 7919 + j * 104_729) % vocabulary.length]);
  return words.join(' ');
}

function insert(db, createdAt, i) {
  const text = content(i);
  return db.run(
    "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('bench', 'alice', 'ctx', ?, 'note', ?, ?)",
    [createdAt, text, Buffer.byteLength(text)],
  );
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = samples.slice().sort((a, b) => a - b);
  const f = (x) => Number(x.toFixed(2));
  return { count: sorted.length, p50: f(percentile(sorted, 50)), p99: f(percentile(sorted, 99)), max: f(sorted.at(-1) ?? NaN) };
}

// The concurrent sender: one message per write transaction every 5 ms until stdin says stop.
async function runChild(dataDir) {
  const { db } = await openDatabase({ dataDir, driver });
  const samples = [];
  let stop = false;
  createInterface({ input: process.stdin }).on('line', () => (stop = true));
  process.stdout.write('ready\n');
  let i = 0;
  while (!stop) {
    const at = Date.now();
    const started = performance.now();
    db.transaction(() => insert(db, Date.now(), 1_000_000 + i++));
    samples.push([at, performance.now() - started]);
    await new Promise((r) => setTimeout(r, 5));
  }
  db.close();
  process.stdout.write(JSON.stringify(samples) + '\n');
}

async function main() {
  const total = Number(values.messages);
  const dataDir = mkdtempSync(join(tmpdir(), 'agentbus-bench-tick-'));
  const config = { ...loadConfig({ env: {}, homeDir: dataDir, cwd: dataDir }), data_directory: dataDir, driver };
  const { db } = await openDatabase({ dataDir, driver });
  const now = Date.now();
  const retentionCutoff = now - config.message_retention_hours * HOUR;

  let t = performance.now();
  db.run("INSERT INTO channels (name, kind) VALUES ('bench', 'ordinary')");
  for (let start = 0; start < total; start += 10_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(total, start + 10_000); i++) {
        // The first half is past retention, the second half is recent.
        insert(db, i < total / 2 ? retentionCutoff - HOUR - (total - i) : now - HOUR, i);
      }
    });
  }
  const pageSize = Number(db.pragma('page_size'));
  const fileMiB = (Number(db.pragma('page_count')) * pageSize) / 1048576;
  console.log(`driver ${driver}: built ${total} messages (${fileMiB.toFixed(0)} MiB) in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--driver', driver, '--child', dataDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  while (!out.includes('ready\n')) await new Promise((r) => setTimeout(r, 10));
  // A second of idle sending first, as the baseline.
  const idleFrom = Date.now();
  await new Promise((r) => setTimeout(r, 1000));
  const idleTo = Date.now();

  const lockTargetMs = values['lock-target'] === undefined ? undefined : Number(values['lock-target']);
  const maintenance = createMaintenance({ db, config, clock: systemClock, log: createMemoryLogger('warn'), owner: 'bench', processIdentity: undefined, lockTargetMs });
  const tickFrom = Date.now();
  t = performance.now();
  const reports = [];
  for (let n = 0; n < 20; n++) {
    const report = await maintenance.runTick();
    reports.push(report);
    const retention = report.steps.find((s) => s.name === 'retention');
    if (retention !== undefined && !retention.cutShort && retention.rows === 0) break;
    if (!report.deadlineReached && n > 0) break;
  }
  const tickMs = performance.now() - t;
  const tickTo = Date.now();
  await maintenance.stop();

  child.stdin.end('stop\n');
  await new Promise((r) => child.on('exit', r));
  const samples = JSON.parse(out.trim().split('\n').at(-1));
  const during = samples.filter(([at]) => at >= tickFrom && at <= tickTo).map(([, ms]) => ms);
  const idle = samples.filter(([at]) => at >= idleFrom && at <= idleTo).map(([, ms]) => ms);

  const first = reports[0];
  console.log(`ticks run: ${reports.length}; total time ${tickMs.toFixed(0)} ms; first tick ${first.durationMs.toFixed(0)} ms, deadline reached: ${first.deadlineReached}`);
  for (const report of reports) {
    const steps = report.steps
      .filter((s) => s.rows > 0 || s.transactions > 0)
      .map(
        (s) =>
          `${s.name} ${s.rows} rows/${s.transactions} tx, max ${s.maxLockMs.toFixed(1)} ms, ${s.slowTransactions} tx over 50 ms${s.cutShort ? ' (cut)' : ''}`,
      );
    console.log(`  tick ${report.durationMs.toFixed(0)} ms, longest write transaction ${report.maxLockMs.toFixed(1)} ms: ${steps.join('; ')}`);
  }
  const maxLockMs = Math.max(...reports.map((r) => r.maxLockMs));
  const txCount = reports.flatMap((r) => r.steps).reduce((n, s) => n + s.transactions, 0);
  const slowCount = reports.flatMap((r) => r.steps).reduce((n, s) => n + s.slowTransactions, 0);
  console.log(`longest writer-lock hold in one go: ${maxLockMs.toFixed(1)} ms (target < 50 ms); ${slowCount} of ${txCount} write transactions over 50 ms`);
  console.log(`concurrent sender commit latency, ms, during the ticks: ${JSON.stringify(summary(during))}`);
  console.log(`concurrent sender commit latency, ms, idle baseline:    ${JSON.stringify(summary(idle))}`);
  const left = db.get('SELECT count(*) AS n FROM messages WHERE created_at < ?', [retentionCutoff]).n;
  console.log(`messages past retention left: ${left}`);
  console.log(
    JSON.stringify({
      driver,
      messages: total,
      ticks: reports.length,
      tickMs: Math.round(tickMs),
      maxLockMs: Number(maxLockMs.toFixed(1)),
      transactions: txCount,
      transactionsOver50ms: slowCount,
      senderDuring: summary(during),
      senderIdle: summary(idle),
    }),
  );
  db.close();
  if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
}

if (values.child !== undefined) await runChild(values.child);
else await main();
