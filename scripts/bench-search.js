#!/usr/bin/env node
// Search benchmarks: semantic search over 10,000 and 100,000 memories at 768
// dimensions, and text search over 100,000 messages; p50 and p99 of the whole
// `search` call (the semantic query is embedded by a local HTTP endpoint that
// answers a precomputed vector, so its round trip is included).
//   npx tsc -p tsconfig.json && node scripts/bench-search.js [--driver native|wasm] [--sizes 10000,100000] [--runs N]
// Targets: 10k semantic < 30 ms, 100k text < 10 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { flag } from './bench-args.js';

const { openDatabase } = await import('../dist/src/db/open-database.js');
const { ConfigFileSchema } = await import('../dist/src/config.js');
const { register } = await import('../dist/src/bus/identity.js');
const { createChannel } = await import('../dist/src/bus/channels.js');
const { search } = await import('../dist/src/bus/search.js');
const { encodeVector, normalizeVector } = await import('../dist/src/embeddings/vector-codec.js');
const { createMemoryLogger } = await import('../dist/src/log.js');
const { systemClock } = await import('../dist/src/clock.js');

const driver = flag('driver', 'native');
const sizes = flag('sizes', '10000,100000').split(',').map(Number);
const runsFlag = flag('runs', undefined);
const DIMS = 768;
const MODEL = 'bench-model';

// A deterministic generator so every run searches the same data.
let state = 42;
const random = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const VOCABULARY = Array.from({ length: 20000 }, (_, i) => `w${i.toString(36)}${'abcdefghij'[i % 10]}`);
// Zipf-like: low indexes are common words, high ones rare.
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)];
const sentence = (n) => Array.from({ length: n }, word).join(' ');
const vector = () => normalizeVector(Array.from({ length: DIMS }, () => random() * 2 - 1));

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(runs, fn) {
  for (let i = 0; i < Math.min(5, runs); i++) await fn(i); // warm the statement cache and the page cache
  const times = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const startCpu = process.cpuUsage();
    await fn(i);
    const used = process.cpuUsage(startCpu);
    times.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), cpu50: percentile(cpu, 50), runs };
}

async function startEndpoint(queryVector) {
  const body = JSON.stringify({ data: [{ index: 0, embedding: Array.from(queryVector) }] });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1/embeddings`, close: () => new Promise((r) => server.close(r)) };
}

async function openBus(dir, endpoint) {
  const { db } = await openDatabase({ dataDir: dir, driver });
  const config = {
    ...v.parse(ConfigFileSchema, {}),
    data_directory: dir,
    driver,
    embedding_api_key_file: undefined,
    embedding_endpoint: endpoint,
    embedding_model: endpoint === undefined ? undefined : MODEL,
    configPath: join(dir, 'config.json'),
    configFileFound: false,
  };
  const ctx = { db, config, clock: systemClock, log: createMemoryLogger('info'), owner: 'bench', processIdentity: undefined, defaultContext: 'bench' };
  const as = register(ctx, { name: 'bench' }).display_name;
  return { ctx, as };
}

function fill(ctx, as, channel, kind, n, withVectors) {
  createChannel(ctx, { as, name: channel, kind });
  const start = performance.now();
  const now = Date.now();
  for (let done = 0; done < n; ) {
    const chunk = Math.min(5000, n - done);
    ctx.db.transaction(() => {
      for (let i = 0; i < chunk; i++) {
        const content = sentence(12 + Math.floor(random() * 20));
        const { lastInsertRowid: seq } = ctx.db.run(
          `INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES (?, ?, 'bench', ?, 'message', ?, ?)`,
          [channel, as, now - (n - done - i) * 1000, content, content.length],
        );
        if (kind === 'memory') ctx.db.run('UPDATE messages SET memory_id = seq, revision = 1 WHERE seq = ?', [seq]);
        if (withVectors) ctx.db.run('INSERT INTO embeddings (seq, model, vector) VALUES (?, ?, ?)', [seq, MODEL, encodeVector(vector())]);
      }
    });
    done += chunk;
  }
  return performance.now() - start;
}

const rows = [];
const fmt = (ms) => ms.toFixed(2).padStart(9);

for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-search-'));
  const endpoint = await startEndpoint(vector());
  try {
    const { ctx, as } = await openBus(dir, endpoint.url);
    const fillMs = fill(ctx, as, 'memories', 'memory', size, true);
    const runs = Number(runsFlag ?? (size > 20000 ? 20 : 100));
    const semantic = await measure(runs, () => search(ctx, { as, query: 'anything at all', mode: 'semantic', count: 100 }));
    const both = await measure(runs, (i) => search(ctx, { as, query: VOCABULARY[200 + i] ?? 'w1', mode: 'both', count: 100 }));
    rows.push({ name: `semantic ${size} memories`, ...semantic, target: size === 10000 ? 30 : undefined, fillMs });
    rows.push({ name: `both ${size} memories`, ...both, fillMs });
    ctx.db.close();
  } finally {
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Text search over 100,000 ordinary messages: a common word, a mid-frequency word, two words, a prefix.
{
  const size = Number(flag('text-size', '100000'));
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-search-'));
  try {
    const { ctx, as } = await openBus(dir, undefined);
    const fillMs = fill(ctx, as, 'chat', 'ordinary', size, false);
    const runs = Number(runsFlag ?? 200);
    const queries = {
      'rare word': (i) => VOCABULARY[10000 + (i % 5000)],
      'mid word': (i) => VOCABULARY[1000 + (i % 1000)],
      'two words': (i) => `${VOCABULARY[100 + (i % 100)]} ${VOCABULARY[300 + (i % 100)]}`,
      'common word': (i) => VOCABULARY[i % 10],
      prefix: (i) => `${VOCABULARY[500 + (i % 100)].slice(0, 3)}*`,
    };
    for (const [label, q] of Object.entries(queries)) {
      const r = await measure(runs, (i) => search(ctx, { as, query: q(i), mode: 'text', count: 100 }));
      rows.push({ name: `text ${size} msgs, ${label}`, ...r, target: label === 'mid word' ? 10 : undefined, fillMs });
    }
    ctx.db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`driver ${driver}, node ${process.version}, ${DIMS} dimensions, count 100, ${cpus().length} cpus, load average ${load}`);
console.log(`${'benchmark'.padEnd(36)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'cpu p50'.padStart(9)} ${'target'.padStart(7)}  runs`);
for (const r of rows) {
  const target = r.target === undefined ? '' : `<${r.target}`;
  console.log(`${r.name.padEnd(36)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.cpu50)} ${target.padStart(7)}  ${r.runs}`);
}
console.log('p50/p99: wall time of the whole search call; cpu p50: this process\'s CPU time per call (less sensitive to other load).');
