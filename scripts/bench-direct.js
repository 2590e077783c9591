#!/usr/bin/env node
// Direct messages through real `agentbus mcp` processes, every available
// driver in one run, each figure beside the channel path measured in the same run:
//   wake       send -> the addressee's waiting receive returns, p50/p99: a direct
//              message and a channel message, interleaved
//   ask        ask-and-wait round trip between two servers: A sends a question
//              to B and waits with receive reply_to; B (in a waiting receive)
//              answers directly. Beside it the same ping-pong over a channel
//   bystanders the cost to agents a message is not for: --bystanders names
//              (spread over --processes servers), each in a waiting receive,
//              while --messages direct messages go from A to B, then as many
//              channel messages on a channel they do not follow, then an idle
//              stretch as long: CPU time of their servers per phase, and how
//              many of their receives returned (the aim: none)
//   npm run bench:direct -- [--samples 100] [--bystanders 50] [--processes 5] [--messages 200] [--only wake,ask,bystanders] [--driver native]
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { flag } from './bench-args.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const SAMPLES = Number(flag('samples', '100'));
const BYSTANDERS = Number(flag('bystanders', '50'));
const PROCESSES = Number(flag('processes', '5'));
const MESSAGES = Number(flag('messages', '200'));
const ONLY = flag('only', 'wake,ask,bystanders').split(',');
const DRIVER = flag('driver', undefined);
const bin = join(here, 'bin', 'agentbus.js');

const { loadDriver } = await import('../dist/src/db/open/select-driver.js');

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 10) / 10;
const load = () => loadavg()[0].toFixed(1);

function freshDir() {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-direct-'));
  // Rate limits are per sender; lift them so the bench measures the bus, not the limiter.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ send_messages_per_second: 10000, send_kib_per_second: 65536 }));
  return dir;
}

async function start(dir, driver) {
  const env = { ...getDefaultEnvironment(), AGENTBUS_DATA_DIR: dir, AGENTBUS_DRIVER: driver, AGENTBUS_CONFIG: join(dir, 'config.json') };
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env, stderr: 'ignore' });
  const client = new Client({ name: 'bench-direct', version: '0' });
  await client.connect(transport);
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a }, undefined, { timeout: 120_000 });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent;
  };
  return { client, call, pid: transport.pid };
}

async function pair(driver) {
  const dir = freshDir();
  const a = await start(dir, driver);
  const b = await start(dir, driver);
  await a.call('register', { name: 'A' });
  await b.call('register', { name: 'B' });
  await a.call('subscribe', { as: 'A', channel: 'general' });
  await b.call('subscribe', { as: 'B', channel: 'general' });
  return {
    dir,
    a,
    b,
    async close() {
      await a.client.close();
      await b.client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** send -> B's waiting receive, direct and channel interleaved. */
async function wake(driver) {
  const p = await pair(driver);
  try {
    const lat = { direct: [], channel: [] };
    let token;
    for (let i = 0; i < 2 * SAMPLES; i++) {
      const kind = i % 2 === 0 ? 'direct' : 'channel';
      const waiting = p.b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), wait_seconds: 10 });
      await sleep(20);
      const sentAt = now();
      await p.a.call('send', { as: 'A', ...(kind === 'direct' ? { to: ['B'] } : { channel: 'general' }), content: String(sentAt) });
      const r = await waiting;
      const at = now();
      if (r.messages.length !== 1 || (r.messages[0].direct === true) !== (kind === 'direct')) throw new Error(`expected one ${kind} message, got ${JSON.stringify(r.messages)}`);
      lat[kind].push(at - Number(r.messages[0].content));
      token = r.batch_token;
    }
    return Object.fromEntries(Object.entries(lat).map(([k, xs]) => [k, { p50: round(pct(xs, 50)), p99: round(pct(xs, 99)) }]));
  } finally {
    await p.close();
  }
}

/** A asks, B answers; A waits with reply_to (direct) or a plain receive on general (channel). */
async function ask(driver) {
  const p = await pair(driver);
  try {
    const lat = { direct: [], channel: [] };
    let bToken;
    let aToken;
    for (let i = 0; i < 2 * SAMPLES; i++) {
      const kind = i % 2 === 0 ? 'direct' : 'channel';
      // B waits for the question, answers it the same way, and acknowledges.
      const answering = (async () => {
        const q = await p.b.call('receive', { as: 'B', ...(bToken ? { ack: bToken } : {}), wait_seconds: 10 });
        bToken = q.batch_token;
        const m = q.messages[0];
        await p.b.call('send', { as: 'B', ...(m.direct ? { to: [m.sender] } : { channel: 'general' }), reply_to: m.seq, content: 'answer' });
      })();
      await sleep(20);
      const startedAt = now();
      const q = await p.a.call('send', { as: 'A', ...(kind === 'direct' ? { to: ['B'] } : { channel: 'general' }), content: 'question' });
      const r = await p.a.call('receive', { as: 'A', ...(aToken ? { ack: aToken } : {}), wait_seconds: 10, ...(kind === 'direct' ? { reply_to: q.seq } : {}) });
      const at = now();
      if (r.messages.length !== 1 || r.messages[0].reply_to !== q.seq) throw new Error(`expected the reply to ${q.seq}, got ${JSON.stringify(r.messages)}`);
      lat[kind].push(at - startedAt);
      aToken = r.batch_token;
      await answering;
    }
    return Object.fromEntries(Object.entries(lat).map(([k, xs]) => [k, { p50: round(pct(xs, 50)), p99: round(pct(xs, 99)) }]));
  } finally {
    await p.close();
  }
}

/** utime + stime of `pid` in ms (Linux /proc). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function bystanders(driver) {
  const p = await pair(driver);
  const servers = [];
  let returned = 0;
  let stopping = false;
  try {
    await p.a.call('create_channel', { as: 'A', name: 'work', kind: 'ordinary' });
    await p.a.call('create_channel', { as: 'A', name: 'quiet', kind: 'ordinary' });
    await p.b.call('subscribe', { as: 'B', channel: 'work' });
    for (let s = 0; s < PROCESSES; s++) servers.push(await start(p.dir, driver));
    const loops = [];
    for (let i = 0; i < BYSTANDERS; i++) {
      const server = servers[i % PROCESSES];
      const name = `X${i}`;
      await server.call('register', { name });
      await server.call('subscribe', { as: name, channel: 'quiet' });
      loops.push(
        (async () => {
          while (!stopping) {
            const r = await server.call('receive', { as: name, wait_seconds: 60 });
            if (r.messages.length > 0 || !stopping) returned++;
          }
        })(),
      );
    }
    await sleep(2000);
    returned = 0;
    const cpu = () => servers.reduce((sum, s) => sum + cpuMs(s.pid), 0);
    const phase = async (send) => {
      const before = cpu();
      const returnedBefore = returned;
      const t = now();
      let token;
      for (let i = 0; i < MESSAGES; i++) {
        if (send !== undefined) {
          await send(i);
          const r = await p.b.call('receive', { as: 'B', ...(token ? { ack: token } : {}) });
          token = r.batch_token;
        } else {
          await sleep(phaseMs / MESSAGES);
        }
      }
      const ms = now() - t;
      // Let the bystanders' monitors and waiters finish what the last commits started.
      await sleep(500);
      return { cpuMs: round(cpu() - before), wallMs: Math.round(ms), receivesReturned: returned - returnedBefore };
    };
    let phaseMs = 0;
    const direct = await phase((i) => p.a.call('send', { as: 'A', to: ['B'], content: `direct ${i}` }));
    const channel = await phase((i) => p.a.call('send', { as: 'A', channel: 'work', content: `channel ${i}` }));
    phaseMs = Math.max(direct.wallMs, channel.wallMs);
    const idle = await phase(undefined);
    stopping = true;
    // What a phase cost beyond the idle floor (heartbeats, the waiters' 250 ms polls) over as long a time.
    const extra = (ph) => round((ph.cpuMs - (idle.cpuMs * ph.wallMs) / idle.wallMs) / MESSAGES);
    return { direct, channel, idle, perMessageCpuMs: { direct: extra(direct), channel: extra(channel) } };
  } finally {
    stopping = true;
    for (const s of servers) await s.client.close();
    await p.close();
  }
}

const drivers = DRIVER === undefined ? ['native', 'wasm'] : [DRIVER];
for (const driver of drivers) {
  const loaded = await loadDriver(driver);
  if (!loaded.ok) {
    console.log(`${driver}: unavailable (${loaded.reason})`);
    continue;
  }
  const report = { driver, samples: SAMPLES, loadBefore: load() };
  if (ONLY.includes('wake')) report.wake = await wake(driver);
  if (ONLY.includes('ask')) report.ask = await ask(driver);
  if (ONLY.includes('bystanders')) report.bystanders = { agents: BYSTANDERS, processes: PROCESSES, messages: MESSAGES, ...(await bystanders(driver)) };
  report.loadAfter = load();
  console.log(JSON.stringify(report, null, 1));
}
