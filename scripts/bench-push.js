#!/usr/bin/env node
// Telling agents about new messages, through real `agentbus mcp` processes,
// every available driver in one run:
//   wake     send -> a waiting receive in another process returns, p50/p99
//            (with --before DIR: the same through another checkout's bin, e.g.
//            main, interleaved, for a before/after in one run)
//   push     send -> the receiver's channel event (notifications/claude/channel)
//            arrives at its client, p50/p99 (the clock starts before the send
//            call, so the send's own round trip is included)
//   inbox    one `agentbus inbox --hook` (a PostToolUse hook) next to a bare
//            `node -e 0`, medians of fresh processes, interleaved
//   flood    1,000 messages as fast as one sender goes, while a hook runs after
//            every "tool call": how many channel events and nudges they cause
//   direct     send -> channel event for a direct message and for a channel
//            message, interleaved in one pair (the direct one is never held
//            behind the 2 s coalescing: sent right after a channel event)
//   bystanders --bystanders names (default 50) over 5 servers that this
//            process is the harness of, none addressed: while --messages
//            direct messages go from A to B, how many inbox-file writes and
//            channel events they get (aim: none), and their servers' CPU
//            time beside an idle stretch as long (the bell still wakes them)
//   npm run bench:push -- [--samples 200] [--hooks 21] [--flood 1000] [--before /path/to/checkout] [--only wake,push,inbox,flood,direct,bystanders[,push-before]]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { flag } from './bench-args.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const SAMPLES = Number(flag('samples', '200'));
const HOOKS = Number(flag('hooks', '21'));
const FLOOD = Number(flag('flood', '1000'));
const BEFORE = flag('before', undefined);
const ONLY = flag('only', 'wake,push,inbox,flood,direct,bystanders').split(',');
const BYSTANDERS = Number(flag('bystanders', '50'));
const MESSAGES = Number(flag('messages', '200'));
const bin = (root) => join(root, 'bin', 'agentbus.js');

const { loadDriver } = await import('../dist/src/db/open/select-driver.js');

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freshDir(config = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-push-'));
  // Rate limits are per sender; lift them so the bench measures the bus, not the limiter.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ send_messages_per_second: 10000, send_kib_per_second: 65536, ...config }));
  return dir;
}

function env(dir, driver) {
  return { ...getDefaultEnvironment(), AGENTBUS_DATA_DIR: dir, AGENTBUS_DRIVER: driver, AGENTBUS_CONFIG: join(dir, 'config.json') };
}

async function start(dir, driver, root = here) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin(root), 'mcp'], env: env(dir, driver), stderr: 'ignore' });
  const client = new Client({ name: 'bench-push', version: '0' });
  const events = [];
  client.fallbackNotificationHandler = async (n) => {
    events.push({ at: now(), n });
  };
  await client.connect(transport);
  const pid = transport.pid;
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent;
  };
  return { client, call, events, pid };
}

/** CPU time (user + system) of process `pid` so far, ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function pair(driver, root = here, channels = ['general']) {
  const dir = freshDir();
  const a = await start(dir, driver, root);
  const b = await start(dir, driver, root);
  await a.call('register', { name: 'A' });
  await b.call('register', { name: 'B' });
  for (const c of channels) {
    if (c !== 'general') await a.call('create_channel', { as: 'A', name: c, kind: 'ordinary' });
    await b.call('subscribe', { as: 'B', channel: c });
  }
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

/** send -> waiting receive, one message at a time. */
async function wake(driver, root) {
  const p = await pair(driver, root);
  try {
    const latencies = [];
    let token;
    for (let i = 0; i < SAMPLES; i++) {
      const waiting = p.b.call('receive', { as: 'B', ...(token ? { ack: token } : {}), wait_seconds: 10 });
      await sleep(20);
      const sentAt = now();
      await p.a.call('send', { as: 'A', channel: 'general', content: String(sentAt) });
      const r = await waiting;
      const receivedAt = now();
      if (r.messages.length !== 1) throw new Error(`expected one message, got ${r.messages.length}`);
      latencies.push(receivedAt - Number(r.messages[0].content));
      token = r.batch_token;
    }
    return { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies), over100: latencies.filter((l) => l > 100).length };
  } finally {
    await p.close();
  }
}

/** send -> channel event at B's client. Ten channels in turn, 250 ms apart, so no event is held back by the 2 s coalescing. */
async function push(driver, root) {
  const channels = Array.from({ length: 10 }, (_, i) => `c${i}`);
  const p = await pair(driver, root, channels);
  try {
    const latencies = [];
    const sendRoundTrips = [];
    for (let i = 0; i < SAMPLES; i++) {
      const before = p.b.events.length;
      const sentAt = now();
      await p.a.call('send', { as: 'A', channel: channels[i % channels.length], content: `push ${i}` });
      sendRoundTrips.push(now() - sentAt);
      const deadline = Date.now() + 5000;
      while (p.b.events.length === before) {
        if (Date.now() > deadline) throw new Error(`no channel event for sample ${i}`);
        await sleep(0.2);
      }
      latencies.push(p.b.events[before].at - sentAt);
      await sleep(250);
    }
    return { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies), send50: pct(sendRoundTrips, 50) };
  } finally {
    await p.close();
  }
}

/** Waits for event number `index` at `client`; its arrival time. */
async function eventAt(client, index, what) {
  const deadline = Date.now() + 5000;
  while (client.events.length <= index) {
    if (Date.now() > deadline) throw new Error(`no channel event for ${what}`);
    await sleep(0.2);
  }
  return client.events[index];
}

/**
 * send -> channel event, a direct message beside a channel message in the same
 * pair: each sample sends on a channel (after a pause, so it is not coalesced),
 * waits for its event, then at once sends B a direct message, which must not
 * wait for the channel's 2 s interval.
 */
async function directPush(driver) {
  const channels = Array.from({ length: 10 }, (_, i) => `c${i}`);
  const p = await pair(driver, here, channels);
  try {
    const channel = [];
    const direct = [];
    for (let i = 0; i < SAMPLES; i++) {
      let before = p.b.events.length;
      let sentAt = now();
      await p.a.call('send', { as: 'A', channel: channels[i % channels.length], content: `channel ${i}` });
      channel.push((await eventAt(p.b, before, `channel sample ${i}`)).at - sentAt);
      before = p.b.events.length;
      sentAt = now();
      await p.a.call('send', { as: 'A', to: ['B'], content: `direct ${i}` });
      const event = await eventAt(p.b, before, `direct sample ${i}`);
      if (event.n.params.meta.direct !== 'true') throw new Error(`sample ${i}: expected the direct event, got ${JSON.stringify(event.n.params.meta)}`);
      direct.push(event.at - sentAt);
      // B reads its mail now and then, so the unread count stays small (as an agent's would).
      if (i % 10 === 9) {
        const r = await p.b.call('receive', { as: 'B', count: 1000 });
        await p.b.call('receive', { as: 'B', ack: r.batch_token, wait_seconds: 0 });
      }
      await sleep(250);
    }
    return { channel: { p50: pct(channel, 50), p99: pct(channel, 99) }, direct: { p50: pct(direct, 50), p99: pct(direct, 99) } };
  } finally {
    await p.close();
  }
}

/**
 * The cost of direct messages to the names they are not for: BYSTANDERS names
 * spread over five servers whose harness is this process (so each keeps an
 * inbox file), subscribed to general, idle. Inbox-file writes are counted by a
 * watch on the inbox folder (each write is a rename into place); CPU time of
 * the bystanders' servers during MESSAGES direct messages A -> B, beside an
 * idle stretch as long.
 */
async function bystanders(driver) {
  const p = await pair(driver);
  const servers = [];
  try {
    const perServer = Math.ceil(BYSTANDERS / 5);
    for (let s = 0; s < 5; s++) {
      const server = await start(p.dir, driver);
      for (let n = 0; n < perServer && s * perServer + n < BYSTANDERS; n++) {
        const name = `By${s}x${n}`;
        await server.call('register', { name });
        await server.call('subscribe', { as: name, channel: 'general' });
      }
      await server.call('list_channels', { as: `By${s}x0` });
      servers.push(server);
    }
    await p.b.call('list_channels', { as: 'B' });
    const inboxDir = join(p.dir, 'inbox');
    mkdirSync(inboxDir, { recursive: true });
    await sleep(1500);
    const writes = new Map();
    const watcher = watch(inboxDir, (event, file) => {
      if (event === 'rename' && file && !file.startsWith('.')) writes.set(file, (writes.get(file) ?? 0) + 1);
    });
    const cpu = () => servers.reduce((sum, s) => sum + cpuMs(s.pid), 0);
    const eventsBefore = servers.reduce((n, s) => n + s.events.length, 0);
    const cpu0 = cpu();
    const started = now();
    for (let i = 0; i < MESSAGES; i++) {
      await p.a.call('send', { as: 'A', to: ['B'], content: `direct ${i}` });
      await sleep(5);
    }
    await sleep(1500);
    const busyMs = now() - started;
    const cpu1 = cpu();
    await sleep(busyMs);
    const cpu2 = cpu();
    watcher.close();
    const bFile = [...writes.keys()].filter((f) => readFileSync(join(inboxDir, f), 'utf8').includes('"name":"B"'));
    const bystanderWrites = [...writes.entries()].filter(([f]) => !bFile.includes(f)).reduce((n, [, c]) => n + c, 0);
    const bWrites = bFile.reduce((n, f) => n + (writes.get(f) ?? 0), 0);
    const events = servers.reduce((n, s) => n + s.events.length, 0) - eventsBefore;
    return { busyMs, bystanderWrites, bWrites, events, busyCpu: cpu1 - cpu0, idleCpu: cpu2 - cpu1, bEvents: p.b.events.length };
  } finally {
    for (const s of servers) await s.client.close();
    await p.close();
  }
}

function timeRun(command, argv, options = {}) {
  const t = performance.now();
  const r = spawnSync(command, argv, { encoding: 'utf8', ...options });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** `agentbus inbox --hook` as a PostToolUse hook of this process (the servers' harness), next to `node -e 0`. */
async function inbox(driver) {
  const p = await pair(driver);
  try {
    await p.a.call('send', { as: 'A', channel: 'general', content: 'an unread message, so the hook has something to say' });
    await p.b.call('list_channels', { as: 'B' });
    const input = JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { stdout: 'x'.repeat(2000) } });
    const options = { env: env(p.dir, driver), input };
    const bare = [];
    const hook = [];
    const silent = [];
    for (let i = 0; i < HOOKS; i++) {
      bare.push(timeRun(process.execPath, ['-e', '0'], options).ms);
      // No session id: every run answers (nothing is held back as already said).
      const r = timeRun(process.execPath, [bin(here), 'inbox', '--hook'], options);
      if (!r.stdout.includes('additionalContext')) throw new Error(`the hook said nothing: ${r.stdout}`);
      hook.push(r.ms);
      silent.push(timeRun(process.execPath, [bin(here), 'inbox', '--hook'], { ...options, input: JSON.stringify({ hook_event_name: 'Stop', session_id: 'x', stop_hook_active: true }) }).ms);
    }
    return { bare: median(bare), hook: median(hook), silent: median(silent) };
  } finally {
    await p.close();
  }
}

/** 1,000 sends as fast as one client goes; a PostToolUse hook (one session) runs back to back meanwhile and 2.5 s after. */
async function flood(driver) {
  const p = await pair(driver);
  try {
    const options = { env: env(p.dir, driver), input: JSON.stringify({ hook_event_name: 'PostToolUse', session_id: 'flood' }) };
    let done = false;
    let hookRuns = 0;
    let nudges = 0;
    // Not spawnSync: the sends must go on while a hook runs.
    const runHook = () =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [bin(here), 'inbox', '--hook'], { env: options.env, stdio: ['pipe', 'pipe', 'ignore'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
        child.on('close', () => resolve(out));
        child.stdin.end(options.input);
      });
    const hooks = (async () => {
      for (;;) {
        const finished = done;
        const out = await runHook();
        hookRuns++;
        if (out.trim() !== '') nudges++;
        if (finished) return;
      }
    })();
    const started = now();
    let last = 0;
    for (let i = 0; i < FLOOD; i++) last = (await p.a.call('send', { as: 'A', channel: 'general', content: `flood ${i}` })).seq;
    const floodMs = now() - started;
    await sleep(2500);
    await p.b.call('list_channels', { as: 'B' });
    done = true;
    await hooks;
    const events = p.b.events.length;
    const lastEvent = p.b.events.at(-1)?.n.params.meta;
    return { floodMs, events, bound: 2 + Math.ceil(floodMs / 2000), lastSeq: lastEvent?.seq === String(last), lastCount: lastEvent?.count, hookRuns, nudges };
  } finally {
    await p.close();
  }
}

console.log(`Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${SAMPLES} samples, ${HOOKS} hook runs, flood ${FLOOD}`);
const drivers = [];
for (const driver of ['native', 'wasm']) {
  const ok = await loadDriver(driver);
  if (ok.ok) drivers.push(driver);
  else console.log(`${driver}: skipped (${ok.reason})`);
}
const f = (x) => x.toFixed(1);
for (const driver of drivers) {
  if (ONLY.includes('wake')) {
    const roots = BEFORE ? [['before', BEFORE], ['after', here]] : [['this', here]];
    for (const [label, root] of roots) {
      const r = await wake(driver, root);
      console.log(`${driver.padEnd(6)} wake (${label}): send -> waiting receive p50 ${f(r.p50)} ms  p99 ${f(r.p99)} ms  max ${f(r.max)} ms  samples over 100 ms: ${r.over100}/${SAMPLES}`);
    }
  }
  if (ONLY.includes('push')) {
    // The build given by --before may predate push: then only this checkout is measured.
    const roots = BEFORE && ONLY.includes('push-before') ? [['before', BEFORE], ['after', here]] : [['this', here]];
    for (const [label, root] of roots) {
      const r = await push(driver, root);
      console.log(`${driver.padEnd(6)} push (${label}): send -> channel event p50 ${f(r.p50)} ms  p99 ${f(r.p99)} ms  max ${f(r.max)} ms  (send round trip alone p50 ${f(r.send50)} ms)`);
    }
  }
  if (ONLY.includes('inbox')) {
    const r = await inbox(driver);
    console.log(
      `${driver.padEnd(6)} inbox: node -e 0 ${f(r.bare)} ms; agentbus inbox --hook answering ${f(r.hook)} ms (${(r.hook / r.bare).toFixed(2)}x), silent Stop ${f(r.silent)} ms (${(r.silent / r.bare).toFixed(2)}x); medians of ${HOOKS}`,
    );
  }
  if (ONLY.includes('flood')) {
    const r = await flood(driver);
    console.log(`${driver.padEnd(6)} flood: ${FLOOD} messages in ${(r.floodMs / 1000).toFixed(1)} s -> ${r.events} channel events (bound ${r.bound}; last names the last message: ${r.lastSeq}, count ${r.lastCount}); hook ran ${r.hookRuns} times, nudged ${r.nudges} times`);
  }
  if (ONLY.includes('direct')) {
    const r = await directPush(driver);
    console.log(
      `${driver.padEnd(6)} direct: send -> channel event, channel message p50 ${f(r.channel.p50)} ms p99 ${f(r.channel.p99)} ms; direct message right after it p50 ${f(r.direct.p50)} ms p99 ${f(r.direct.p99)} ms (${(r.direct.p50 / r.channel.p50).toFixed(2)}x p50)`,
    );
  }
  if (ONLY.includes('bystanders')) {
    const r = await bystanders(driver);
    console.log(
      `${driver.padEnd(6)} bystanders: ${MESSAGES} direct messages to B in ${(r.busyMs / 1000).toFixed(1)} s -> ${BYSTANDERS} bystanders in 5 servers: ${r.bystanderWrites} inbox-file writes, ${r.events} channel events; their servers' CPU ${r.busyCpu} ms (idle stretch as long: ${r.idleCpu} ms); B: ${r.bWrites} inbox-file writes, ${r.bEvents} events`,
    );
  }
}
console.log(`load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
