#!/usr/bin/env node
// The postgres driver beside the native one in one run (issue 23's figures), as ratios, through
// real `agentbus mcp` processes; PostgreSQL is a throwaway cluster on loopback TCP (scripts/pg-cluster.js):
//   sends    sends/s with rate limits lifted: one sender, and 8 senders at once (each its own server),
//            into a bus already holding --prefill messages (default 0)
//   wake     send -> waiting receive on another "machine": the receiver's server has its own data
//            directory and HOME (native: the same file, so its bell); p50/p99
//   search   full-text search (`search`, mode text) p50 / p99 at --messages messages
//   startup  spawn -> `initialize` answer, and RSS after initialize + tools/list; medians
//   npm run bench:pg -- [--sends 1000] [--prefill 0] [--samples 100] [--messages 100000] [--runs 5] [--only sends,wake,search,startup]
// Run it with Node 22 (npm run puts it first on PATH): the native driver needs node:sqlite.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';
import { flag } from './bench-args.js';
import { startCluster } from './pg-cluster.js';

const bin = fileURLToPath(new URL('../bin/agentbus.js', import.meta.url));
const SENDS = Number(flag('sends', '1000'));
const SAMPLES = Number(flag('samples', '100'));
const MESSAGES = Number(flag('messages', '100000'));
const PREFILL = Number(flag('prefill', '0'));
const RUNS = Number(flag('runs', '5'));
const ONLY = flag('only', 'sends,wake,search,startup').split(',');
const SENDERS = 8;
// Rate limits are per sender; lift them so the bench measures the bus, not the limiter.
const LIFTED = { send_messages_per_second: 10000, send_kib_per_second: 65536 };

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const load = () => loadavg()[0].toFixed(1);
const scratch = [];
const tempDir = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};

/**
 * One bus per case. A "machine" is a data directory (and HOME) of its own; on native every
 * machine shares the first one's file (one machine can only share a file with itself).
 */
let made = 0;
async function newBus(driver, cluster) {
  const first = tempDir('agentbus-bench-pg-');
  writeFileSync(join(first, 'config.json'), JSON.stringify(LIFTED));
  let url;
  if (driver === 'postgres') {
    const name = `bench_${process.pid}_${++made}`;
    cluster.psql(`CREATE DATABASE ${name}`);
    url = new URL(cluster.url);
    url.pathname = `/${name}`;
    url = url.toString();
  }
  const machineEnv = (dir) => ({
    ...getDefaultEnvironment(),
    HOME: dir,
    AGENTBUS_CONFIG: join(first, 'config.json'),
    AGENTBUS_DATA_DIR: driver === 'postgres' ? dir : first,
    ...(driver === 'postgres' ? { AGENTBUS_DATABASE_URL: url } : { AGENTBUS_DRIVER: driver }),
  });
  return {
    url,
    first,
    env: machineEnv(first),
    otherMachineEnv() {
      const dir = tempDir('agentbus-bench-pg-machine-');
      return machineEnv(dir);
    },
  };
}

async function server(env) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
    return r.structuredContent;
  };
  return { call, pid: transport.pid, close: () => client.close() };
}

async function benchSends(driver, cluster) {
  const bus = await newBus(driver, cluster);
  const a = await server(bus.env);
  await a.call('register', { name: 'A' });
  await a.call('create_channel', { as: 'A', name: 'bench', kind: 'ordinary' });
  if (PREFILL > 0) await fill(driver, bus, PREFILL);
  for (let i = 0; i < 100; i++) await a.call('send', { as: 'A', channel: 'bench', content: `warm ${i}` });
  let t = performance.now();
  for (let i = 0; i < SENDS; i++) await a.call('send', { as: 'A', channel: 'bench', content: `message ${i}` });
  const one = Math.round((SENDS / (performance.now() - t)) * 1000);
  const many = [a];
  for (let s = 1; s < SENDERS; s++) many.push(await server(bus.otherMachineEnv()));
  await Promise.all(many.map((m, s) => (s === 0 ? undefined : m.call('register', { name: `S${s}` }))));
  const perSender = Math.ceil(SENDS / SENDERS);
  t = performance.now();
  await Promise.all(many.map(async (m, s) => {
    for (let i = 0; i < perSender; i++) await m.call('send', { as: s === 0 ? 'A' : `S${s}`, channel: 'bench', content: `many ${s} ${i}` });
  }));
  const eight = Math.round(((perSender * SENDERS) / (performance.now() - t)) * 1000);
  await Promise.all(many.map((m) => m.close()));
  return { one, eight };
}

async function benchWake(driver, cluster) {
  const bus = await newBus(driver, cluster);
  const a = await server(bus.env);
  const b = await server(bus.otherMachineEnv());
  await a.call('register', { name: 'A' });
  await b.call('register', { name: 'B' });
  await a.call('create_channel', { as: 'A', name: 'bench', kind: 'ordinary' });
  await b.call('subscribe', { as: 'B', channel: 'bench' });
  let token;
  const latencies = [];
  for (let i = 0; i < SAMPLES + 10; i++) {
    const waiting = b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), wait_seconds: 10 });
    await new Promise((r) => setTimeout(r, 30));
    const sentAt = performance.now();
    await a.call('send', { as: 'A', channel: 'bench', content: `ping ${i}` });
    const r = await waiting;
    const took = performance.now() - sentAt;
    if (r.messages.length !== 1) throw new Error(`expected one message, got ${r.messages.length}`);
    token = r.batch_token;
    if (i >= 10) latencies.push(took);
  }
  await a.close();
  await b.close();
  return { p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

/** Words 'w0'..'w1999' in a fixed pseudo-random order: every query word is in about 0.6 % of messages. */
function contentOf(i) {
  let x = (i * 2654435761) >>> 0;
  const words = [];
  for (let k = 0; k < 12; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(`w${x % 2000}`);
  }
  return words.join(' ');
}

async function fill(driver, bus, count) {
  const rows = Array.from({ length: count }, (_, i) => contentOf(i));
  const now = Date.now();
  if (driver === 'postgres') {
    const client = new pg.Client({ connectionString: bus.url });
    await client.connect();
    for (let at = 0; at < rows.length; at += 10_000) {
      const batch = rows.slice(at, at + 10_000);
      await client.query(
        `INSERT INTO messages (channel, sender, context, created_at, type, content, bytes)
         SELECT 'general', 'bench', 'bench', $1::bigint, 'message', c, length(c) + 64 FROM unnest($2::text[]) AS c`,
        [now, batch],
      );
    }
    // What autovacuum does by itself soon after a bulk load: the GIN index's pending list merged, statistics taken.
    await client.query('VACUUM ANALYZE messages');
    await client.end();
    return;
  }
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(join(bus.first, 'agentbus.db'));
  db.exec('PRAGMA busy_timeout = 10000');
  const insert = db.prepare(`INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('general', 'bench', 'bench', ?, 'message', ?, ?)`);
  db.exec('BEGIN IMMEDIATE');
  for (const c of rows) insert.run(now, c, c.length + 64);
  db.exec('COMMIT');
  // What the maintenance tick's fts_merge step does: the index's segments merged.
  db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 500)");
  db.close();
}

async function benchSearch(driver, cluster) {
  const bus = await newBus(driver, cluster);
  const a = await server(bus.env);
  await a.call('register', { name: 'A' });
  const t = performance.now();
  await fill(driver, bus, MESSAGES);
  const fillMs = performance.now() - t;
  const times = [];
  let hits = 0;
  for (let i = 0; i < 60; i++) {
    const words = contentOf(MESSAGES + i).split(' ').slice(0, 2).join(' ');
    const s = performance.now();
    const r = await a.call('search', { as: 'A', query: words, mode: 'text' });
    if (i >= 10) times.push(performance.now() - s);
    hits += r.results.length;
  }
  await a.close();
  return { p50: pct(times, 50), p99: pct(times, 99), hits, fillMs };
}

function rssOf(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** spawn -> initialize answer, then RSS after tools/list; raw JSON-RPC so the figure is the server's alone. */
function startOnce(env) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [bin, 'mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    let initMs;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (initMs === undefined && out.includes('"id":1')) {
        initMs = performance.now() - t;
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
      }
      if (initMs !== undefined && out.includes('"id":2')) {
        setTimeout(() => {
          const rss = rssOf(child.pid);
          child.kill();
          resolve({ initMs, rss });
        }, 500);
      }
    });
    child.on('error', reject);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } })}\n`);
  });
}

async function benchStartup(driver, cluster) {
  const bus = await newBus(driver, cluster);
  await startOnce(bus.env);
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await startOnce(bus.env));
  return { initMs: pct(runs.map((r) => r.initMs), 50), rss: pct(runs.map((r) => r.rss), 50) };
}

const CASES = {
  sends: { run: benchSends, line: (r) => `sends/s one sender ${r.one}, ${SENDERS} senders ${r.eight}${PREFILL > 0 ? ` (into ${PREFILL} messages)` : ''}` },
  wake: { run: benchWake, line: (r) => `send -> waiting receive on another machine p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms` },
  search: { run: benchSearch, line: (r) => `text search at ${MESSAGES} messages p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.hits} results over 50 queries; filled in ${(r.fillMs / 1000).toFixed(1)} s)` },
  startup: { run: benchStartup, line: (r) => `spawn -> initialize ${r.initMs.toFixed(0)} ms, RSS after initialize ${r.rss.toFixed(1)} MiB` },
};

const ratio = (name, native, postgres) => {
  if (name === 'sends') return `postgres/native: one sender ${(postgres.one / native.one).toFixed(2)}, ${SENDERS} senders ${(postgres.eight / native.eight).toFixed(2)}`;
  if (name === 'startup') return `postgres/native: initialize ${(postgres.initMs / native.initMs).toFixed(2)}, RSS ${(postgres.rss / native.rss).toFixed(2)}`;
  return `postgres/native: p50 ${(postgres.p50 / native.p50).toFixed(2)}, p99 ${(postgres.p99 / native.p99).toFixed(2)}`;
};

const cluster = await startCluster({ fsync: true });
const version = cluster.psql('SHOW server_version').trim();
console.log(`Node ${process.version}, PostgreSQL ${version} on loopback TCP; load ${load()}`);
try {
  for (const name of ONLY) {
    const c = CASES[name];
    if (c === undefined) throw new Error(`--only: unknown case ${name}; the cases are ${Object.keys(CASES).join(', ')}`);
    const results = {};
    for (const driver of ['native', 'postgres']) {
      results[driver] = await c.run(driver, cluster);
      console.log(`${name.padEnd(8)} ${driver.padEnd(8)} ${c.line(results[driver])}  (load ${load()})`);
    }
    console.log(`${name.padEnd(8)} ${ratio(name, results.native, results.postgres)}`);
  }
} finally {
  cluster.stop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
}
