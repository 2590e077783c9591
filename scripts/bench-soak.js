#!/usr/bin/env node
// Soak benchmark: real `agentbus mcp` processes under a steady load for a long
// time, every available driver side by side in one run, each with its own data
// directory. Per driver: --senders processes share --rate sends/s between them
// (unique text, so full-text indexing works), each also edits a shared memory
// every 30 s; --receivers processes long-poll receive, acknowledge every batch,
// and run a search and a history read every --read-seconds (15; 0 for none).
// Sends are open loop (started on schedule, not after the previous answer). The maintenance tick runs as
// configured (cleanup every 60 s by default).
//
// Each server runs with scripts/soak-probe.js preloaded, which samples RSS (and
// what of it is glibc malloc's, and the wasm memory's), V8 heap (young and old
// generations), file descriptors, CPU time and live SQLite statements in the server itself;
// this script adds the -wal size. Printed: a table over time (one row per
// --table-every samples, per driver the maximum over its processes, -wal and
// statements summed) and a summary per process role: start, end, max, and the
// least-squares slope after warm-up (the first --warmup-fraction of the run).
//
//   npm run bench:soak -- [--minutes 30] [--rate 40] [--senders 2] [--receivers 2]
//                          [--sample-seconds 10] [--drivers native,wasm] [--read-seconds 15]
//                          [--pragma-cached] [--json out.json] [--cleanup-seconds 60]
//                          [--node-option <flag>]... [--server-env NAME=value]...
//
// --pragma-cached measures without the known statement-per-call leak of
// Database.pragma() (see soak-probe.js). Needs a build first.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    rate: { type: 'string', default: '40' },
    senders: { type: 'string', default: '2' },
    receivers: { type: 'string', default: '2' },
    'sample-seconds': { type: 'string', default: '10' },
    'table-every': { type: 'string' },
    'warmup-fraction': { type: 'string', default: '0.2' },
    'cleanup-seconds': { type: 'string', default: '60' },
    'read-seconds': { type: 'string', default: '15' },
    drivers: { type: 'string', default: 'native,wasm' },
    'pragma-cached': { type: 'boolean', default: false },
    json: { type: 'string' },
    node: { type: 'string' },
    'node-option': { type: 'string', multiple: true, default: [] },
    'server-env': { type: 'string', multiple: true, default: [] },
  },
});
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const SENDERS = Number(values.senders);
const RECEIVERS = Number(values.receivers);
const SAMPLE_MS = Number(values['sample-seconds']) * 1000;
const WARMUP = Number(values['warmup-fraction']);
const NODE = values.node ?? process.execPath;
const durationMs = MINUTES * 60_000;
const totalSamples = Math.max(1, Math.floor(durationMs / SAMPLE_MS));
const TABLE_EVERY = Number(values['table-every'] ?? Math.max(1, Math.round(totalSamples / 30)));

// The servers run tsc's output, not the bundle, so that the probe sees the modules they use (soak-server.js).
const server = fileURLToPath(new URL('./soak-server.js', import.meta.url));
const probe = fileURLToPath(new URL('./soak-probe.js', import.meta.url));
const { loadDriver } = await import('../dist/src/db/open/select-driver.js');

const MIB = 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startServer(dir, driver, role, probeFile) {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [...values['node-option'], '--import', probe, server, 'mcp'],
    env: {
      ...getDefaultEnvironment(),
      AGENTBUS_DATA_DIR: dir,
      AGENTBUS_DRIVER: driver,
      AGENTBUS_CONFIG: join(dir, 'config.json'),
      SOAK_PROBE_FILE: probeFile,
      SOAK_PROBE_INTERVAL_MS: String(SAMPLE_MS),
      ...(values['pragma-cached'] ? { SOAK_PRAGMA_CACHED: '1' } : {}),
      ...Object.fromEntries(values['server-env'].map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: `soak-${role}`, version: '0' });
  await client.connect(transport);
  const errors = new Map();
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) {
      const code = r.structuredContent?.error?.code ?? 'unknown';
      errors.set(`${name}:${code}`, (errors.get(`${name}:${code}`) ?? 0) + 1);
      return undefined;
    }
    return r.structuredContent;
  };
  return { role, client, call, errors, pid: transport.pid };
}

// Message text from a 5,000-word vocabulary with a Zipf-like spread (a few common words, a long tail),
// so that full-text search matches a realistic share of messages rather than all of them.
const VOCABULARY = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`);
let seed = 12345;
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
function word() {
  return VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length ** random()) - 1)];
}
function text(i) {
  const words = [];
  for (let j = 0; j < 24; j++) words.push(word());
  return `status ${i}: ${words.join(' ')}`;
}
/** Search terms of middling frequency: ranks 20..200 of the vocabulary. */
const QUERIES = VOCABULARY.slice(20, 200);

async function runDriver(driver, stopAt) {
  const dir = mkdtempSync(join(tmpdir(), `agentbus-soak-${driver}-`));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ cleanup_interval_seconds: Number(values['cleanup-seconds']) }));
  const probeFile = join(dir, 'probe.jsonl');
  writeFileSync(probeFile, '');
  const servers = [];
  for (let i = 0; i < SENDERS; i++) servers.push(await startServer(dir, driver, `sender${i + 1}`, probeFile));
  for (let i = 0; i < RECEIVERS; i++) servers.push(await startServer(dir, driver, `receiver${i + 1}`, probeFile));
  const senders = servers.slice(0, SENDERS);
  const receivers = servers.slice(SENDERS);
  for (const s of servers) await s.call('register', { name: s.role });
  await senders[0].call('create_channel', { as: 'sender1', name: 'soak', kind: 'ordinary' });
  await senders[0].call('create_channel', { as: 'sender1', name: 'notes', kind: 'memory' });
  for (const r of receivers) await r.call('subscribe', { as: r.role, channel: 'soak' });
  const memory = await senders[0].call('send', { as: 'sender1', channel: 'notes', content: 'shared note, revision 0' });

  const counts = { sent: 0, skipped: 0, received: 0, searches: 0, edits: 0 };
  const walSamples = [];
  const t0 = Date.now();
  const walTimer = setInterval(() => {
    const size = statSync(join(dir, 'agentbus.db-wal'), { throwIfNoEntry: false })?.size ?? 0;
    walSamples.push({ t: Date.now(), wal: size });
  }, SAMPLE_MS);

  const senderLoop = async (s, index) => {
    // Open loop: each sender starts a send every `every` ms whether or not the last one has answered
    // (MCP allows concurrent requests), so a slow moment does not lower the rate or cause a burst later.
    const every = (1000 * SENDERS) / RATE;
    let next = Date.now() + (every * index) / SENDERS;
    let n = 0;
    let nextEdit = Date.now() + 30_000 + index * 15_000;
    const inFlight = new Set();
    while (Date.now() < stopAt) {
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      next += every;
      if (inFlight.size >= 64) {
        counts.skipped++;
        continue;
      }
      const i = n++ * SENDERS + index;
      const p = s.call('send', { as: s.role, channel: 'soak', content: text(i) }).then((r) => {
        if (r) counts.sent++;
        inFlight.delete(p);
      });
      inFlight.add(p);
      if (Date.now() >= nextEdit && memory !== undefined) {
        nextEdit += 30_000;
        if (await s.call('edit_memory', { as: s.role, memory_id: memory.seq, content: `shared note, edit ${i}` })) counts.edits++;
      }
    }
    await Promise.all(inFlight);
  };
  const receiverLoop = async (r) => {
    let token;
    const readEvery = Number(values['read-seconds']) * 1000;
    let nextRead = readEvery > 0 ? Date.now() + readEvery : Infinity;
    let q = 0;
    while (Date.now() < stopAt) {
      const got = await r.call('receive', { as: r.role, ...(token ? { ack: token } : {}), count: 200, wait_seconds: 2 });
      if (got !== undefined) {
        token = got.batch_token ?? undefined;
        counts.received += got.messages.length;
      }
      if (Date.now() >= nextRead) {
        nextRead += readEvery;
        q++;
        if (await r.call('search', { as: r.role, query: QUERIES[q % QUERIES.length], count: 20 })) counts.searches++;
        await r.call('history', { as: r.role, channel: 'soak', count: 50 });
      }
    }
    if (token) await r.call('receive', { as: r.role, ack: token, count: 1 });
  };
  await Promise.all([...senders.map((s, i) => senderLoop(s, i)), ...receivers.map((r) => receiverLoop(r))]);
  clearInterval(walTimer);
  const elapsed = (Date.now() - t0) / 1000;
  // One last sample from every process before closing them.
  await sleep(Math.min(SAMPLE_MS, 2_000));
  const samples = readFileSync(probeFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const errors = {};
  for (const s of servers) for (const [k, n] of s.errors) errors[`${s.role} ${k}`] = n;
  for (const s of servers) await s.client.close();
  rmSync(dir, { recursive: true, force: true });
  const roleOf = new Map(servers.map((s) => [s.pid, s.role]));
  return { driver, t0, elapsed, counts, errors, walSamples, samples: samples.map((x) => ({ ...x, role: roleOf.get(x.pid) ?? String(x.pid) })) };
}

function slopePerHour(points) {
  // Least squares over (minutes, value); returns value per hour.
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

const METRICS = [
  { key: 'rss', label: 'RSS MiB', scale: MIB, digits: 1 },
  { key: 'heapUsed', label: 'heap used MiB', scale: MIB, digits: 1 },
  { key: 'heapTotal', label: 'heap total MiB', scale: MIB, digits: 1 },
  { key: 'heapYoung', label: 'heap young MiB', scale: MIB, digits: 1 },
  { key: 'heapOld', label: 'heap old MiB', scale: MIB, digits: 1 },
  { key: 'external', label: 'external MiB', scale: MIB, digits: 1 },
  { key: 'wasmMemory', label: 'wasm memory MiB', scale: MIB, digits: 1 },
  { key: 'rssWasm', label: 'RSS wasm mem MiB', scale: MIB, digits: 1 },
  { key: 'rssCode', label: 'RSS code MiB', scale: MIB, digits: 1 },
  { key: 'rssAnon', label: 'RSS anon MiB', scale: MIB, digits: 1 },
  { key: 'rssMalloc', label: 'RSS malloc MiB', scale: MIB, digits: 1 },
  { key: 'rssFile', label: 'RSS file MiB', scale: MIB, digits: 1 },
  { key: 'fds', label: 'fds', scale: 1, digits: 0 },
  // Its slope per hour is CPU seconds per hour: 36 is 1% of a core.
  { key: 'cpuSeconds', label: 'CPU s used', scale: 1, digits: 1 },
  { key: 'liveStatements', label: 'live statements', scale: 1, digits: 0 },
];

function summarise(result) {
  const rows = [];
  const byRole = new Map();
  for (const s of result.samples) {
    if (!byRole.has(s.role)) byRole.set(s.role, []);
    byRole.get(s.role).push(s);
  }
  const warmupEnd = result.t0 + WARMUP * result.elapsed * 1000;
  const halfway = result.t0 + 0.5 * result.elapsed * 1000;
  for (const metric of METRICS) {
    for (const [role, list] of byRole) {
      const points = list.filter((s) => typeof s[metric.key] === 'number').map((s) => ({ t: s.t, x: (s.t - result.t0) / 60_000, y: s[metric.key] / metric.scale }));
      if (points.length === 0) continue;
      const after = points.filter((p) => p.t >= warmupEnd);
      rows.push({
        metric: metric.label,
        role,
        start: points[0].y,
        end: points.at(-1).y,
        max: Math.max(...points.map((p) => p.y)),
        slope: slopePerHour(after),
        late: slopePerHour(points.filter((p) => p.t >= halfway)),
        digits: metric.digits,
      });
    }
  }
  const wal = result.walSamples.map((s) => ({ t: s.t, x: (s.t - result.t0) / 60_000, y: s.wal / MIB }));
  if (wal.length > 0) {
    rows.push({
      metric: '-wal MiB',
      role: 'file',
      start: wal[0].y,
      end: wal.at(-1).y,
      max: Math.max(...wal.map((p) => p.y)),
      slope: slopePerHour(wal.filter((p) => p.t >= warmupEnd)),
      late: slopePerHour(wal.filter((p) => p.t >= halfway)),
      digits: 2,
    });
  }
  return rows;
}

function pad(s, n) {
  return String(s).padStart(n);
}

function printTimeTable(results) {
  // Per driver and sample slot: max RSS and heap over processes, sum of statements, max fds, -wal.
  const header = ['min'];
  for (const r of results) header.push(`${r.driver} RSS`, 'heap', 'stmts', 'fds', '-wal');
  console.log(header.map((h, i) => pad(h, i === 0 ? 5 : 10)).join(''));
  const slots = Math.max(...results.map((r) => Math.ceil((r.elapsed * 1000) / SAMPLE_MS) + 1));
  for (let k = 0; k < slots; k += TABLE_EVERY) {
    const cells = [pad(((k * SAMPLE_MS) / 60_000).toFixed(1), 5)];
    for (const r of results) {
      const lo = r.t0 + k * SAMPLE_MS - SAMPLE_MS / 2;
      const hi = lo + SAMPLE_MS;
      const inSlot = r.samples.filter((s) => s.t >= lo && s.t < hi);
      const walS = r.walSamples.find((s) => s.t >= lo && s.t < hi);
      if (inSlot.length === 0) {
        cells.push(pad('', 10), pad('', 10), pad('', 10), pad('', 10), pad(walS ? (walS.wal / MIB).toFixed(2) : '', 10));
        continue;
      }
      cells.push(
        pad((Math.max(...inSlot.map((s) => s.rss)) / MIB).toFixed(1), 10),
        pad((Math.max(...inSlot.map((s) => s.heapUsed)) / MIB).toFixed(1), 10),
        pad(inSlot.reduce((a, s) => a + s.liveStatements, 0), 10),
        pad(Math.max(...inSlot.map((s) => s.fds ?? 0)), 10),
        pad(walS ? (walS.wal / MIB).toFixed(2) : '', 10),
      );
    }
    console.log(cells.join(''));
  }
}

const drivers = [];
for (const d of values.drivers.split(',')) {
  const ok = await loadDriver(d);
  if (ok.ok) drivers.push(d);
  else console.log(`${d}: skipped (${ok.reason})`);
}
console.log(
  `soak: ${MINUTES} min, ${RATE} sends/s per driver through ${SENDERS} sender + ${RECEIVERS} receiver \`agentbus mcp\` processes, ` +
    `sample every ${SAMPLE_MS / 1000} s, drivers ${drivers.join(' + ')} side by side; Node ${NODE === process.execPath ? process.version : NODE}` +
    `${values['pragma-cached'] ? '; Database.pragma() through the statement cache' : ''}` +
    `${values['node-option'].length > 0 ? `; node ${values['node-option'].join(' ')}` : ''}` +
    `${values['server-env'].length > 0 ? `; env ${values['server-env'].join(' ')}` : ''}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
);
const stopAt = Date.now() + durationMs;
const results = await Promise.all(drivers.map((d) => runDriver(d, stopAt)));
console.log(`load at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log();
printTimeTable(results);
for (const r of results) {
  console.log();
  console.log(
    `${r.driver}: ${r.counts.sent} sent (${(r.counts.sent / r.elapsed).toFixed(1)}/s${r.counts.skipped > 0 ? `, ${r.counts.skipped} not started: 64 in flight` : ''}), ${r.counts.received} received, ${r.counts.edits} memory edits, ${r.counts.searches} searches in ${(r.elapsed / 60).toFixed(1)} min` +
      (Object.keys(r.errors).length > 0 ? `; errors ${JSON.stringify(r.errors)}` : '; no errors'),
  );
  console.log(
    `${'metric'.padEnd(18)}${'process'.padEnd(11)}${pad('start', 9)}${pad('end', 9)}${pad('max', 9)}${pad('slope/h', 10)}${pad('late/h', 10)}` +
      `  (per hour, least squares: after the first ${Math.round(WARMUP * 100)}%, and over the second half)`,
  );
  for (const row of summarise(r)) {
    const f = (x) => x.toFixed(row.digits);
    const signed = (x) => (x >= 0 ? '+' : '') + x.toFixed(Math.max(row.digits, 1));
    console.log(`${row.metric.padEnd(18)}${row.role.padEnd(11)}${pad(f(row.start), 9)}${pad(f(row.end), 9)}${pad(f(row.max), 9)}${pad(signed(row.slope), 10)}${pad(signed(row.late), 10)}`);
  }
}
if (values.json) {
  writeFileSync(values.json, JSON.stringify({ args: values, results: results.map((r) => ({ ...r, summary: summarise(r) })) }, null, 1));
  appendFileSync(values.json, '\n');
}
