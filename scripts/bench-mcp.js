#!/usr/bin/env node
// The bus through real `agentbus mcp` processes, every available driver in one run:
//   send round trips/s through one server (sequential tools/call send), with the reader draining
//   afterwards and again while another server receives live (long-poll receive + ack)
//   cross-process send-to-receive latency: B long-polls receive, A sends; p50/p99
//   npm run bench:mcp -- [--sends 2000] [--latency 200] [--drivers native,wasm] [--rounds 1] [--compare other/bin/agentbus.js]
// It also reports the CPU each server used per message while the reader was live, and each server's
// RSS after the live sends (from /proc).
// --rounds repeats every case with fresh servers and reports medians; --compare adds the same cases
// for another agentbus (e.g. a checkout of main), interleaved with these in every round, and the
// ratios of the two builds' medians: run to run this machine moves the rates by about 15%, more
// than most changes do, so compare builds within one run, never across runs.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { countFlag, flag } from './bench-args.js';
import { median } from './bench-stats.js';

const bin = fileURLToPath(new URL('../bin/agentbus.js', import.meta.url));
const SENDS = countFlag('sends', '2000', 1);
const LATENCY = countFlag('latency', '200', 1);
const ROUNDS = countFlag('rounds', '1', 1);
const COMPARE = flag('compare', undefined) === undefined ? undefined : resolve(flag('compare'));
if (COMPARE !== undefined && !existsSync(COMPARE)) throw new Error(`--compare ${COMPARE}: no such file; give the bin/agentbus.js of another built checkout`);

const { loadDriver } = await import('../dist/src/db/open/select-driver.js');

async function start(dir, driver, server) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [server, 'mcp'],
    env: { ...getDefaultEnvironment(), AGENTBUS_DATA_DIR: dir, AGENTBUS_DRIVER: driver, AGENTBUS_CONFIG: join(dir, 'config.json') },
  });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const pid = transport.pid;
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent;
  };
  return { client, call, cpuMs: () => serverCpuMs(pid), rssMiB: () => serverRssMiB(pid) };
}

/** Resident memory of a server process now, in MiB (VmRSS from /proc). */
function serverRssMiB(pid) {
  try {
    const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round((kib / 1024) * 10) / 10;
  } catch {
    return NaN;
  }
}

/** User + system CPU of a server process so far, in ms (from /proc: the load of other processes moves it far less than wall time). */
function serverCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function benchDriver(driver, server) {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-mcp-'));
  // Rate limits are per sender; lift them so the bench measures the bus, not the limiter.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ send_messages_per_second: 10000, send_kib_per_second: 65536 }));
  try {
    const a = await start(dir, driver, server);
    const b = await start(dir, driver, server);
    await a.call('register', { name: 'A' });
    await b.call('register', { name: 'B' });
    await a.call('create_channel', { as: 'A', name: 'bench', kind: 'ordinary' });
    await b.call('subscribe', { as: 'B', channel: 'bench' });

    for (let i = 0; i < 100; i++) await a.call('send', { as: 'A', channel: 'bench', content: `warm ${i}` });
    let t = performance.now();
    for (let i = 0; i < SENDS; i++) await a.call('send', { as: 'A', channel: 'bench', content: `message ${i}` });
    const sendsPerSecond = Math.round((SENDS / (performance.now() - t)) * 1000);

    // Drain what is queued (the reader after the sender), then measure one message at a time.
    let token;
    const drain = async () => {
      let got = 0;
      for (;;) {
        const r = await b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), count: 1000 });
        token = r.batch_token;
        got += r.messages.length;
        if (r.messages.length === 0) return got;
      }
    };
    await drain();

    // The same sends while B receives live: long-poll receive + ack, as an agent waiting for mail does.
    let sending = true;
    let receivedLive = 0;
    let liveReceives = 0;
    const reader = (async () => {
      while (sending) {
        const r = await b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), count: 1000, wait_seconds: 1 });
        token = r.batch_token;
        receivedLive += r.messages.length;
        liveReceives += 1;
      }
    })();
    t = performance.now();
    const cpuBefore = [a.cpuMs(), b.cpuMs()];
    for (let i = 0; i < SENDS; i++) await a.call('send', { as: 'A', channel: 'bench', content: `live ${i}` });
    const liveSendsPerSecond = Math.round((SENDS / (performance.now() - t)) * 1000);
    // CPU per message while both run: the sender's server, and the reader's (wake, look, receive, ack).
    const senderCpuUs = Math.round(((a.cpuMs() - cpuBefore[0]) * 1000) / SENDS);
    const readerCpuUs = Math.round(((b.cpuMs() - cpuBefore[1]) * 1000) / SENDS);
    sending = false;
    await reader;
    // What the servers hold after 2 x SENDS messages (V8's tiers and SQLite's caches included).
    const senderRss = a.rssMiB();
    const readerRss = b.rssMiB();
    if (receivedLive + (await drain()) !== SENDS) throw new Error(`the live reader lost messages: ${receivedLive} received live`);
    const latencies = [];
    for (let i = 0; i < LATENCY; i++) {
      const waiting = b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), wait_seconds: 10 });
      await new Promise((r) => setTimeout(r, 20));
      const sentAt = performance.timeOrigin + performance.now();
      await a.call('send', { as: 'A', channel: 'bench', content: String(sentAt) });
      const r = await waiting;
      const receivedAt = performance.timeOrigin + performance.now();
      if (r.messages.length !== 1) throw new Error(`expected one message, got ${r.messages.length}`);
      latencies.push(receivedAt - Number(r.messages[0].content));
      token = r.batch_token;
    }
    await a.client.close();
    await b.client.close();
    return { sendsPerSecond, liveSendsPerSecond, receivedLive, liveReceives, senderCpuUs, readerCpuUs, senderRss, readerRss, p50: pct(latencies, 50), p99: pct(latencies, 99) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function line(r) {
  return (
    `send round trips ${r.sendsPerSecond}/s (reader after), ${r.liveSendsPerSecond}/s beside a live reader ` +
    `(live/after ${(r.liveSendsPerSecond / r.sendsPerSecond).toFixed(2)}, ${r.receivedLive} received live in ${r.liveReceives} receives; ` +
    `CPU per message: sender's server ${r.senderCpuUs} µs, reader's ${r.readerCpuUs} µs; RSS after ${r.senderRss} / ${r.readerRss} MiB)   ` +
    `send->receive latency p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`
  );
}

/** The medians of one case's rounds, in the shape of one round's result. */
function medians(rounds) {
  const of = (key) => median(rounds.map((r) => r[key]));
  const ratio = median(rounds.map((r) => r.liveSendsPerSecond / r.sendsPerSecond));
  return { sendsPerSecond: Math.round(of('sendsPerSecond')), liveSendsPerSecond: Math.round(of('liveSendsPerSecond')), ratio, senderCpuUs: Math.round(of('senderCpuUs')), readerCpuUs: Math.round(of('readerCpuUs')), senderRss: Math.round(of('senderRss') * 10) / 10, readerRss: Math.round(of('readerRss') * 10) / 10, p50: of('p50'), p99: of('p99') };
}

const builds = COMPARE === undefined ? [{ label: '', server: bin }] : [{ label: '', server: bin }, { label: ' (compare)', server: COMPARE }];
console.log(`Node ${process.version}; ${SENDS} sends, ${LATENCY} latency samples, ${ROUNDS} round(s)${COMPARE ? `, compare ${COMPARE}` : ''}`);
const drivers = [];
for (const driver of flag('drivers', 'native,wasm').split(',')) {
  const ok = await loadDriver(driver);
  if (ok.ok) drivers.push(driver);
  else console.log(`${driver}: skipped (${ok.reason})`);
}
const runs = new Map(); // `${driver}${label}` -> results of every round
for (let round = 0; round < ROUNDS; round++) {
  // Which build goes first alternates, so neither always runs on a machine the other just warmed.
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const driver of drivers) {
    for (const { label, server } of order) {
      const r = await benchDriver(driver, server);
      const key = `${driver}${label}`;
      runs.set(key, [...(runs.get(key) ?? []), r]);
      console.log(`${(driver + label).padEnd(17)} ${line(r)}`);
    }
  }
}
const results = Object.fromEntries([...runs].map(([key, rounds]) => [key, medians(rounds)]));
if (ROUNDS > 1) {
  console.log(`medians of ${ROUNDS} rounds:`);
  for (const [key, m] of Object.entries(results)) {
    console.log(
      `${key.padEnd(17)} after ${m.sendsPerSecond}/s, live ${m.liveSendsPerSecond}/s, live/after ${m.ratio.toFixed(2)}, ` +
        `CPU per message ${m.senderCpuUs} / ${m.readerCpuUs} µs, RSS after ${m.senderRss} / ${m.readerRss} MiB, p99 ${m.p99.toFixed(1)} ms`,
    );
  }
}
for (const driver of drivers) {
  const base = results[`${driver} (compare)`];
  const mine = results[driver];
  if (base === undefined || mine === undefined) continue;
  console.log(
    `${driver}: this build / compare: after ${(mine.sendsPerSecond / base.sendsPerSecond).toFixed(2)}, live ${(mine.liveSendsPerSecond / base.liveSendsPerSecond).toFixed(2)}, ` +
      `live/after ${mine.ratio.toFixed(2)} against ${base.ratio.toFixed(2)}, reader's CPU per message ${(mine.readerCpuUs / base.readerCpuUs).toFixed(2)}`,
  );
}
if (results.native && results.wasm) {
  console.log(`wasm/native: sends ${(results.wasm.sendsPerSecond / results.native.sendsPerSecond).toFixed(2)}, live sends ${(results.wasm.liveSendsPerSecond / results.native.liveSendsPerSecond).toFixed(2)}, p50 ${(results.wasm.p50 / results.native.p50).toFixed(2)}`);
}
