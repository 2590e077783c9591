#!/usr/bin/env node
// Send -> waiting receive on another "machine" (issue 23): a sender process
// commits a message, this process has a receive waiting for it; the latency
// is from the moment the sender began its send (a wall-clock stamp in the
// message: both processes run on this one machine) to the moment the
// receive returned it. Two cases, interleaved round by round so the load of
// the moment weighs on both alike:
//   native    both on one SQLite file (node:sqlite), woken by the bell file
//             of their shared data directory: the ratio base
//   postgres  a throwaway cluster (scripts/pg-cluster.js) over loopback TCP,
//             each process with a data directory of its own, woken by the
//             sender's NOTIFY through the receiver's LISTEN connection
//   npm run bench:pg-wake -- [--n 200] [--fsync off]
// Run it with Node 22 (npm run puts it first on PATH) so node:sqlite loads.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { flag } from './bench-args.js';
import { startCluster } from './pg-cluster.js';

const N = Number(flag('n', '200'));
const FSYNC = flag('fsync', 'on') !== 'off';
const CHILD = flag('child', undefined);
const self = fileURLToPath(import.meta.url);
const now = () => performance.timeOrigin + performance.now();

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** A bus context on `dataDir` (native) or `url` (postgres), with the bus's own modules from dist/. */
async function open(kind, dataDir, url, owner) {
  const { loadConfig } = await import('../dist/src/config.js');
  const { systemClock } = await import('../dist/src/clock.js');
  const { createMemoryLogger } = await import('../dist/src/log.js');
  const { db } =
    kind === 'postgres'
      ? await (await import('../dist/src/db/open/open-postgres.js')).openPostgresDatabase({ url })
      : await (await import('../dist/src/db/open/open-database.js')).openDatabase({ dataDir, driver: 'native' });
  const config = { ...loadConfig({ env: { AGENTBUS_DATA_DIR: dataDir }, homeDir: dataDir, cwd: dataDir }), send_messages_per_second: 100_000 };
  const { ringBell } = await import('../dist/src/bus/change-waiter.js');
  // As agentbus mcp does: announce rings the bells (called only on a bell-file engine).
  const announce = (addressees) => ringBell(dataDir, addressees);
  return { db, config, clock: systemClock, log: createMemoryLogger(), owner, processIdentity: undefined, defaultContext: 'bench', announce };
}

/** The sender: registers Alice, then sends one message per line read, its content the stamp of the send's start. */
async function sender(kind, dataDir, url) {
  const { register } = await import('../dist/src/bus/identity.js');
  const { send } = await import('../dist/src/bus/send.js');
  const ctx = await open(kind, dataDir, url, `sender-${process.pid}`);
  register(ctx, { name: 'Alice' });
  process.stdout.write('ready\n');
  for await (const _ of createInterface({ input: process.stdin })) {
    const started = now();
    await send(ctx, { as: 'Alice', channel: 'general', content: String(started) });
    process.stdout.write(`${now() - started}\n`);
  }
}

/** One case: the receiving context here, its waiter, and the sender process. */
async function startCase(kind, url) {
  const { createChangeWaiter } = await import('../dist/src/bus/change-waiter.js');
  const { register } = await import('../dist/src/bus/identity.js');
  const { subscribe } = await import('../dist/src/bus/channels.js');
  const here = mkdtempSync(join(tmpdir(), `agentbus-wake-${kind}-`));
  // native: one machine, one data directory; postgres: the sender's data directory is another machine's.
  const there = kind === 'native' ? here : mkdtempSync(join(tmpdir(), `agentbus-wake-${kind}-`));
  const ctx = await open(kind, here, url, 'receiver');
  register(ctx, { name: 'Bob' });
  subscribe(ctx, { as: 'Bob', channel: 'general' });
  const waiter = createChangeWaiter(here, undefined, { wakeSource: ctx.db.wakeSource });
  const child = spawn(process.execPath, [self, '--child', kind, '--dir', there, ...(url ? ['--url', url] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  if ((await lines.next()).value !== 'ready') throw new Error(`the ${kind} sender did not start`);
  // Let the receiver's LISTEN connection come up (started by the waiter's subscription).
  await new Promise((r) => setTimeout(r, 500));
  return {
    ctx,
    waiter,
    send: () => child.stdin.write('go\n'),
    sent: () => lines.next(),
    close() {
      child.kill();
      waiter.close();
      ctx.db.close();
      rmSync(here, { recursive: true, force: true });
      if (there !== here) rmSync(there, { recursive: true, force: true });
    },
  };
}

/** One round: a receive waits, the sender sends, the receive returns it; the latency from the send's start, and the send's own duration. */
async function round(c, receive) {
  let wokeAt = Number.NaN;
  // The waiter as receive sees it, noting when its (last) wait ended: the wake itself.
  const waiter = {
    waitForChange: (...args) => c.waiter.waitForChange(...args).then(() => void (wokeAt = now())),
    watchName: (name) => c.waiter.watchName(name),
    close: () => undefined,
  };
  const waiting = receive(c.ctx, { as: 'Bob', wait_seconds: 10 }, { waiter });
  await new Promise((r) => setTimeout(r, 5));
  c.send();
  const result = await waiting;
  const at = now();
  const sendMs = Number((await c.sent()).value);
  if (result.messages.length !== 1) throw new Error(`received ${result.messages.length} messages, expected 1`);
  await receive(c.ctx, { as: 'Bob', wait_seconds: 0, ack: result.batch_token });
  const startedAt = Number(result.messages[0].content);
  return { ms: at - startedAt, sendMs, wakeMs: wokeAt - (startedAt + sendMs) };
}

async function main() {
  const { receive } = await import('../dist/src/bus/receive.js');
  console.log(`bench:pg-wake, ${N} rounds per case, fsync ${FSYNC ? 'on' : 'off'} on the cluster, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  const cluster = await startCluster({ fsync: FSYNC });
  const cases = {};
  try {
    cases.native = await startCase('native');
    cases.postgres = await startCase('postgres', cluster.url);
    const times = { native: [], postgres: [] };
    const sends = { native: [], postgres: [] };
    const wakes = { native: [], postgres: [] };
    for (let i = 0; i < N + 10; i++) {
      for (const kind of i % 2 === 0 ? ['native', 'postgres'] : ['postgres', 'native']) {
        const { ms, sendMs, wakeMs } = await round(cases[kind], receive);
        if (i < 10) continue;
        times[kind].push(ms);
        sends[kind].push(sendMs);
        wakes[kind].push(wakeMs);
      }
    }
    const base = { p50: pct(times.native, 50), p99: pct(times.native, 99) };
    for (const kind of ['native', 'postgres']) {
      const p50 = pct(times[kind], 50);
      const p99 = pct(times[kind], 99);
      console.log(`${kind.padEnd(9)} p50 ${p50.toFixed(2)} ms  p99 ${p99.toFixed(2)} ms  max ${Math.max(...times[kind]).toFixed(2)} ms  (x${(p50 / base.p50).toFixed(2)} / x${(p99 / base.p99).toFixed(2)} native)`);
      console.log(`          the send alone p50 ${pct(sends[kind], 50).toFixed(2)} ms p99 ${pct(sends[kind], 99).toFixed(2)} ms; its return -> the wait woken p50 ${pct(wakes[kind], 50).toFixed(2)} ms p99 ${pct(wakes[kind], 99).toFixed(2)} ms`);
    }
    console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at end`);
  } finally {
    for (const c of Object.values(cases)) c.close();
    cluster.stop();
  }
}

if (CHILD !== undefined) await sender(CHILD, flag('dir', undefined), flag('url', undefined));
else await main();
