#!/usr/bin/env node
// Costs as the bus grows: one bus grown to each of --sizes messages (bulk
// inserts through the native driver in 50,000-row transactions), and one of
// --memories memories with 768-dimension vectors; at each size, with each
// driver on the same file (a copy converted to the portable protocol for
// wasm), p50 and p99 of text search (a rare word, two common words, a
// phrase, one common word, a prefix), status (the report, in process), history and receive, and for the
// memories semantic search, `both` and recall@10 against exact brute force.
//   npm run build && node scripts/bench-scale.js [--sizes 10000,100000,1000000] [--memories 10000,100000] [--drivers native,wasm] [--runs N]
//     [--keep DIR]        grow the buses in DIR (messages/, memories/, and their wasm copies) and leave them there;
//                         a later run with the same DIR grows only what is missing (1M messages takes minutes)
//     [--grow-only]       grow (and convert) and stop: measure later, with --keep
//     [--compare ROOT]    measure another built checkout too (its dist/ and bin/), each figure beside this one's,
//                         same files, same run: before/after figures of a change
// Aims per driver: text p50 <= 20 ms at 1M messages; semantic p50 <= 50 ms at 100k x 768 with recall@10 >= 0.95; status <= 200 ms at 1M.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { flag, hasSwitch } from './bench-args.js';

/** The modules a build provides, from its checkout root (this one's or --compare's). */
async function loadBuild(root, label) {
  const m = async (path) => import(new URL(`dist/src/${path}`, root).href);
  return {
    label,
    bin: new URL('bin/agentbus.js', root).pathname,
    // src/db/ has folders since issue 25; a --compare checkout from before has the flat path.
    ...(await m('db/open/open-database.js').catch(() => m('db/open-database.js'))),
    ...(await m('config.js')),
    register: (await m('bus/identity.js')).register,
    subscribe: (await m('bus/channels.js')).subscribe,
    search: (await m('bus/search.js')).search,
    send: (await m('bus/send.js')).send,
    history: (await m('bus/history.js')).history,
    receive: (await m('bus/receive.js')).receive,
    readReport: (await m('cli/status-command.js')).readReport,
    createMemoryLogger: (await m('log.js')).createMemoryLogger,
    systemClock: (await m('clock.js')).systemClock,
  };
}
const here = await loadBuild(new URL('../', import.meta.url), 'this');
const compareRoot = flag('compare', undefined);
const builds = compareRoot === undefined ? [here] : [await loadBuild(new URL(`file://${compareRoot.replace(/\/?$/, '/')}`), 'compare'), here];
const { openDatabase } = here;
const { encodeVector, normalizeVector, decodeVector, dot } = await import('../dist/src/embeddings/vector-codec.js');
const sizes = flag('sizes', '10000,100000,1000000').split(',').filter(Boolean).map(Number);
const memorySizes = flag('memories', '10000,100000').split(',').filter(Boolean).map(Number);
const drivers = flag('drivers', 'native,wasm').split(',');
const runsFlag = flag('runs', undefined);
const DIMS = 768;
const MODEL = 'bench-model';
const CHUNK = 50_000;

// A deterministic generator so every run builds and searches the same data.
const generator = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const random = generator(42);
const VOCABULARY = Array.from({ length: 20000 }, (_, i) => `w${i.toString(36)}${'abcdefghij'[i % 10]}`);
// Zipf-like: low indexes are common words (w0a is in about half the messages), high ones rare.
const RANK = new Map(VOCABULARY.map((w, i) => [w, i]));
const word = (r = random) => VOCABULARY[Math.floor(VOCABULARY.length * r() ** 3)];
const sentence = (n, r = random) => Array.from({ length: n }, () => word(r)).join(' ');

// Real-looking vectors: a text's vector is the normalized weighted sum of its words' fixed
// pseudo-random Gaussian vectors (rarer words weigh more) plus one direction every text shares,
// as real embeddings share one. Memories are written about topics (each a set of 40 words), so
// vectors cluster by topic and overlap through shared and common words.
const wordVectors = new Map();
function wordVector(w) {
  let vec = wordVectors.get(w);
  if (vec === undefined) {
    let h = 2166136261;
    for (const c of w) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    const r = generator(h);
    vec = new Float32Array(DIMS);
    for (let i = 0; i < DIMS; i += 2) {
      const a = Math.sqrt(-2 * Math.log(r() + 1e-12));
      vec[i] = a * Math.cos(2 * Math.PI * r());
      if (i + 1 < DIMS) vec[i + 1] = a * Math.sin(2 * Math.PI * r());
    }
    wordVectors.set(w, vec);
  }
  return vec;
}
const SHARED = wordVector('the shared direction of every text');
function embedText(text) {
  const sum = new Float32Array(DIMS);
  const words = text.split(' ');
  for (const w of words) {
    const weight = Math.log(2 + (RANK.get(w) ?? 20000)) / 10;
    const wv = wordVector(w);
    for (let i = 0; i < DIMS; i++) sum[i] += weight * wv[i];
  }
  const shared = 0.6 * Math.sqrt(words.length);
  for (let i = 0; i < DIMS; i++) sum[i] += shared * SHARED[i];
  return normalizeVector(sum);
}
const TOPICS = Array.from({ length: 400 }, () => Array.from({ length: 40 }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]));
function topicText(r, length) {
  const topic = TOPICS[Math.floor(r() * TOPICS.length)];
  const other = TOPICS[Math.floor(r() * TOPICS.length)];
  return Array.from({ length }, () => {
    const x = r();
    return x < 0.5 ? topic[Math.floor(r() * 40)] : x < 0.65 ? other[Math.floor(r() * 40)] : word(r);
  }).join(' ');
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** p50 and p99 of wall time, and p50 of this process's CPU time (user + system: what other processes' load changes least). */
async function measure(runs, fn) {
  for (let i = 0; i < Math.min(3, runs); i++) await fn(i); // warm the statement cache and the page cache
  const times = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const used = process.cpuUsage();
    await fn(i);
    const spent = process.cpuUsage(used);
    times.push(performance.now() - start);
    cpu.push((spent.user + spent.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), cpu: percentile(cpu, 50), runs };
}

async function startEndpoint() {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = JSON.parse(body).input;
      const text = Array.isArray(input) ? input[0] : input;
      const reply = JSON.stringify({ data: [{ index: 0, embedding: Array.from(embedText(text)) }] });
      res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1/embeddings`, close: () => new Promise((r) => server.close(r)) };
}

function busContext(build, db, dir, driver, endpoint) {
  const config = {
    ...v.parse(build.ConfigFileSchema, {}),
    data_directory: dir,
    driver,
    embedding_api_key_file: undefined,
    embedding_endpoint: endpoint,
    embedding_model: endpoint === undefined ? undefined : MODEL,
    configPath: join(dir, 'config.json'),
    configFileFound: false,
  };
  return { db, config, clock: build.systemClock, log: build.createMemoryLogger('info'), owner: 'bench', processIdentity: undefined, defaultContext: 'bench' };
}

/** Grows the bus to `target` messages in `channel` (kind memory: with vectors). */
function grow(db, channel, memory, target) {
  const have = db.get('SELECT count(*) AS n FROM messages WHERE channel = ?', [channel]).n;
  const start = performance.now();
  const now = Date.now();
  for (let done = have; done < target; ) {
    const chunk = Math.min(CHUNK, target - done);
    db.transaction(() => {
      for (let i = 0; i < chunk; i++) {
        const content = memory ? topicText(random, 10 + Math.floor(random() * 20)) : sentence(12 + Math.floor(random() * 20));
        const { lastInsertRowid: seq } = db.run(
          `INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES (?, 'bench', 'bench', ?, 'message', ?, ?)`,
          [channel, now - (target - done - i) * 100, content, content.length],
        );
        if (memory) {
          db.run('UPDATE messages SET memory_id = seq, revision = 1 WHERE seq = ?', [seq]);
          db.run('INSERT INTO embeddings (seq, model, vector) VALUES (?, ?, ?)', [seq, MODEL, encodeVector(embedText(content))]);
        }
      }
    });
    done += chunk;
  }
  // What the tick does for a live bus: merge full FTS levels.
  while (true) {
    const before = db.get('SELECT total_changes() AS n').n;
    db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 500)");
    if (db.get('SELECT total_changes() AS n').n - before < 2) break;
  }
  return performance.now() - start;
}

/**
 * The bus for `driver`: the file itself for native; for wasm a copy converted
 * to the portable protocol, in `dir`-wasm, made again only when the native
 * bus was grown to another size since.
 */
function fileFor(dir, driver, size) {
  if (driver === 'native') return dir;
  const copy = `${dir}-wasm`;
  // The measurements' own few writes (sessions, sends) do not make it another bus: the size names it.
  const stamp = `grown to ${size}`;
  const stampFile = join(copy, 'converted-from');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return copy;
  rmSync(copy, { recursive: true, force: true });
  mkdirSync(copy, { recursive: true });
  copyFileSync(join(dir, 'agentbus.db'), join(copy, 'agentbus.db'));
  const run = spawnSync(process.execPath, [here.bin, 'convert', '--to', 'portable'], { env: { ...process.env, AGENTBUS_DATA_DIR: copy }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`convert failed: ${run.stderr}`);
  writeFileSync(stampFile, stamp);
  return copy;
}

/** Exact top 10 by brute force over every stored vector, read in seq ranges. */
function exactTop(db, query, k) {
  const top = [];
  for (let lo = 0; ; lo += 10000) {
    const rows = db.all('SELECT seq, vector FROM embeddings WHERE seq >= ? AND seq < ?', [lo, lo + 10000]);
    const more = db.get('SELECT 1 AS x FROM embeddings WHERE seq >= ? LIMIT 1', [lo + 10000]);
    for (const r of rows) top.push({ seq: r.seq, score: dot(query, decodeVector(r.vector)) });
    top.sort((a, b) => b.score - a.score || b.seq - a.seq);
    top.length = Math.min(top.length, k);
    if (more === undefined) break;
  }
  return top.map((t) => t.seq);
}

const rows = [];
const record = (build, driver, size, name, r, extra = '') => rows.push({ build: build.label, driver, size, name, ...r, extra, load: loadavg()[0] });
const runsFor = (size) => Number(runsFlag ?? (size >= 1_000_000 ? 15 : 30));

async function measureMessages(build, driver, dir, size) {
  const { register, subscribe, search, send, history, receive, readReport, systemClock } = build;
  const { db } = await build.openDatabase({ dataDir: dir, driver });
  try {
    const ctx = busContext(build, db, dir, driver, undefined);
    const as = register(ctx, { name: 'bench' }).display_name;
    const reader = register(ctx, { name: 'reader' }).display_name;
    subscribe(ctx, { as: reader, channel: 'general' });
    const runs = runsFor(size);
    // Each build its own rare words: a word another build just searched would find its rows in the OS page cache.
    const rare = 12000 + 200 * builds.indexOf(build);
    const text = {
      'text, rare word': (i) => VOCABULARY[rare + i],
      'text, two common words': (i) => `${VOCABULARY[i % 2]} ${VOCABULARY[2 + (i % 3)]}`,
      'text, phrase': (i) => `"${VOCABULARY[i % 2]} ${VOCABULARY[2 + (i % 3)]}"`,
      'text, one common word': (i) => VOCABULARY[i % 4],
      'text, prefix': (i) => `w${(40 + (i % 20)).toString(36)}*`,
    };
    for (const [name, q] of Object.entries(text)) record(build, driver, size, name, await measure(runs, (i) => search(ctx, { as, query: q(i), mode: 'text', count: 100 })));
    const version = db.get('SELECT max(version) AS v FROM schema_migrations').v;
    record(build, driver, size, 'status (report)', await measure(runs, () => readReport(db, ctx.config, systemClock, version)));
    record(build, driver, size, 'history, 50 newest', await measure(runs, () => history(ctx, { as, channel: 'general', count: 50 })));
    let token;
    record(
      build,
      driver,
      size,
      'send + receive',
      await measure(runs, async (i) => {
        await send(ctx, { as, channel: 'general', content: `fresh message ${i}` });
        const got = await receive(ctx, { as: reader, ...(token ? { ack: token } : {}), wait_seconds: 0 });
        token = got.batch_token ?? undefined;
      }),
    );
  } finally {
    db.close();
  }
  // status as a person runs it: a process, Node start-up included; its CPU time by /usr/bin/time where there is one.
  const times = [];
  const cpu = [];
  const timer = existsSync('/usr/bin/time') ? join(tmpdir(), `agentbus-bench-scale-time-${process.pid}`) : undefined;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const command = [process.execPath, build.bin, 'status', '--json'];
    const [file, ...args] = timer === undefined ? command : ['/usr/bin/time', '-f', '%U %S', '-o', timer, ...command];
    const run = spawnSync(file, args, { env: { ...process.env, AGENTBUS_DATA_DIR: dir, AGENTBUS_DRIVER: driver }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`status failed: ${run.stderr}`);
    times.push(performance.now() - start);
    if (timer !== undefined) cpu.push(readFileSync(timer, 'utf8').trim().split(/\s+/).slice(-2).reduce((sum, x) => sum + Number(x) * 1000, 0));
  }
  if (timer !== undefined) rmSync(timer, { force: true });
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  record(build, driver, size, '`agentbus status --json` process', { p50: times[2], p99: times[4], cpu: cpu[2] ?? NaN, runs: 5 });
}

async function measureMemories(build, driver, dir, size, endpoint) {
  const { register, search } = build;
  const { db } = await build.openDatabase({ dataDir: dir, driver });
  try {
    const ctx = busContext(build, db, dir, driver, endpoint.url);
    const as = register(ctx, { name: 'bench' }).display_name;
    const runs = runsFor(size);
    const queryRandom = generator(7);
    const queries = Array.from({ length: runs + 3 }, () => topicText(queryRandom, 6 + Math.floor(queryRandom() * 6)));
    const first = performance.now();
    await search(ctx, { as, query: queries[0], mode: 'semantic', count: 10 });
    const coldMs = performance.now() - first;
    record(build, driver, size, 'semantic', await measure(runs, (i) => search(ctx, { as, query: queries[i], mode: 'semantic', count: 100 })), `first query (fills the cache) ${coldMs.toFixed(0)} ms`);
    record(build, driver, size, 'both', await measure(runs, (i) => search(ctx, { as, query: queries[i], mode: 'both', count: 100 })));
    let hits = 0;
    let fellBack = 0;
    const checked = Math.min(20, queries.length);
    for (let i = 0; i < checked; i++) {
      const answer = await search(ctx, { as, query: queries[i], mode: 'semantic', count: 10 });
      // A query the endpoint did not embed in time is answered by text search (a notice says so): not a recall miss.
      if (answer.mode !== 'semantic') {
        fellBack++;
        continue;
      }
      const exact = new Set(exactTop(db, embedText(queries[i]), 10));
      hits += answer.results.filter((r) => exact.has(r.seq)).length;
    }
    const rss = process.memoryUsage().rss / 2 ** 20;
    const note = `rss ${rss.toFixed(0)} MiB${fellBack === 0 ? '' : `, ${fellBack} answered as text (endpoint unavailable), not counted`}`;
    record(build, driver, size, 'recall@10 vs exact', { p50: hits / ((checked - fellBack) * 10), p99: NaN, runs: checked - fellBack }, note);
  } finally {
    db.close();
  }
}

// --keep DIR: grow (or reuse) the buses in DIR/messages and DIR/memories (and their -wasm copies) and leave them there.
const keep = flag('keep', undefined);
const messagesDir = keep === undefined ? mkdtempSync(join(tmpdir(), 'agentbus-bench-scale-')) : join(keep, 'messages');
const memoriesDir = keep === undefined ? mkdtempSync(join(tmpdir(), 'agentbus-bench-scale-mem-')) : join(keep, 'memories');
const growOnly = hasSwitch('grow-only');
const endpoint = await startEndpoint();
try {
  for (const size of sizes) {
    const { db } = await openDatabase({ dataDir: messagesDir, driver: 'native' });
    const ms = grow(db, 'general', false, size);
    db.close();
    console.error(`grew to ${size} messages in ${(ms / 1000).toFixed(1)} s`);
    for (const driver of drivers) {
      const dir = fileFor(messagesDir, driver, size);
      if (!growOnly) for (const build of builds) await measureMessages(build, driver, dir, size);
    }
  }
  for (const size of memorySizes) {
    const { db } = await openDatabase({ dataDir: memoriesDir, driver: 'native' });
    const ms = grow(db, 'memory', true, size);
    db.close();
    console.error(`grew to ${size} memories in ${(ms / 1000).toFixed(1)} s`);
    for (const driver of drivers) {
      const dir = fileFor(memoriesDir, driver, size);
      if (!growOnly) for (const build of builds) await measureMemories(build, driver, dir, size, endpoint);
    }
  }
} finally {
  await endpoint.close();
  if (keep === undefined) for (const dir of [messagesDir, memoriesDir]) for (const d of [dir, `${dir}-wasm`]) rmSync(d, { recursive: true, force: true });
}

const load = loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`node ${process.version}, ${cpus().length} cpus, load average ${load}, ${DIMS} dimensions, search count 100`);
const buildColumn = builds.length > 1;
const head = buildColumn ? `${'build'.padEnd(8)} ` : '';
console.log(`${head}${'driver'.padEnd(7)} ${'size'.padStart(8)}  ${'benchmark'.padEnd(34)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'cpu p50'.padStart(9)}  load  runs`);
const fmt = (x) => (Number.isNaN(x) ? '' : x < 1.5 && x > 0 && x <= 1 ? x.toFixed(3) : x.toFixed(1)).padStart(9);
for (const r of rows) {
  const build = buildColumn ? `${r.build.padEnd(8)} ` : '';
  console.log(`${build}${r.driver.padEnd(7)} ${String(r.size).padStart(8)}  ${r.name.padEnd(34)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.cpu ?? NaN)}  ${r.load.toFixed(1).padStart(4)}  ${r.runs} ${r.extra}`);
}
if (buildColumn) console.log(`compare: ${compareRoot}; this: ${new URL('../', import.meta.url).pathname}; each pair measured one after the other on the same file.`);
console.log('ms, wall time of the whole call in process unless named a process (cpu: this process\'s CPU time, the embeddings endpoint included); recall is the share of the exact top 10 found.');
