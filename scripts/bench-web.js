#!/usr/bin/env node
// The web console (`agentbus web`) in Debian's chromium, every driver in one run:
//   load   page load to the first screen (the newest messages listed and the
//          event stream live) with --messages rows (default 100,000) in the
//          database, median of fresh pages
//   live   send by a separate `agentbus mcp` process -> the row on the open page,
//          p50/p99 (the clock starts before the send call, so its round trip is
//          included; the page stamps the row when it enters the DOM)
//   npm run bench:web -- [--messages 100000] [--loads 7] [--samples 40]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chromium } from 'playwright-core';
import { flag } from './bench-args.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const MESSAGES = Number(flag('messages', '100000'));
const LOADS = Number(flag('loads', '7'));
const SAMPLES = Number(flag('samples', '40'));
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y --no-install-recommends chromium`);

const { openDatabase } = await import('../dist/src/db/open-database.js');
const { loadDriver } = await import('../dist/src/db/select-driver.js');
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

function env(dir, driver) {
  return { ...getDefaultEnvironment(), AGENTBUS_DATA_DIR: dir, AGENTBUS_DRIVER: driver, AGENTBUS_CONFIG: join(dir, 'config.json'), HOME: dir, USER: 'bench' };
}

async function startMcp(dir, driver) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(here, 'bin', 'agentbus.js'), 'mcp'], env: env(dir, driver), stderr: 'ignore' });
  const client = new Client({ name: 'bench-web', version: '0' });
  await client.connect(transport);
  const call = async (name, a) => (await client.callTool({ name, arguments: a })).structuredContent;
  return { call, close: () => client.close() };
}

function startWeb(dir, driver) {
  const child = spawn(process.execPath, [join(here, 'bin', 'agentbus.js'), 'web'], { env: env(dir, driver), stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out);
      if (m) resolve({ url: m[0], stop: () => child.kill('SIGINT') });
    });
    child.on('exit', (code) => reject(new Error(`agentbus web exited ${code}: ${out}`)));
  });
}

async function seed(dir, driver) {
  const agent = await startMcp(dir, driver);
  await agent.call('register', { name: 'Alice' });
  await agent.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await agent.close();
  const { db } = await openDatabase({ dataDir: dir, driver });
  const now = Date.now();
  for (let done = 0; done < MESSAGES; ) {
    const chunk = Math.min(5000, MESSAGES - done);
    db.transaction(() => {
      for (let i = 0; i < chunk; i++) {
        const content = `message ${done + i}: the build on branch ${(done + i) % 97} passed its checks`;
        db.run("INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('work', 'Alice', 'bench', ?, 'message', ?, ?)", [
          now - (MESSAGES - done - i) * 10,
          content,
          content.length,
        ]);
      }
    });
    done += chunk;
  }
  db.close();
}

const drivers = [];
for (const name of ['native', 'wasm']) {
  try {
    await loadDriver(name);
    drivers.push(name);
  } catch {
    console.log(`${name}: not available on this Node (${process.version}); skipped`);
  }
}

const rows = [];
const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'agentbus-bench-chromium-')), {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  for (const driver of drivers) {
    const dir = mkdtempSync(join(tmpdir(), 'agentbus-bench-web-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ send_messages_per_second: 10000, send_kib_per_second: 65536 }));
    await seed(dir, driver);
    const web = await startWeb(dir, driver);
    const agent = await startMcp(dir, driver);
    try {
      await agent.call('register', { name: 'Carol' });
      const loads = [];
      // One load first, not counted: the browser's and the server's first page (caches, compilation).
      for (let i = -1; i < LOADS; i++) {
        const page = await browser.newPage();
        const t0 = Date.now();
        await page.goto(web.url);
        await page.locator('#connection', { hasText: 'live' }).waitFor({ timeout: 60_000 });
        await page.locator('#messages li').first().waitFor({ timeout: 60_000 });
        if (i >= 0) loads.push(Date.now() - t0);
        await page.close();
      }
      const page = await browser.newPage();
      await page.goto(web.url);
      await page.locator('#connection', { hasText: 'live' }).waitFor({ timeout: 60_000 });
      await page.locator('#messages li').first().waitFor({ timeout: 60_000 });
      await page.evaluate(() => {
        window.seen = {};
        new MutationObserver(() => {
          for (const li of document.querySelectorAll('#messages li[data-seq]')) window.seen[li.dataset.seq] ??= Date.now();
        }).observe(document.getElementById('messages'), { childList: true, subtree: true });
      });
      const live = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = Date.now();
        const { seq } = await agent.call('send', { as: 'Carol', channel: 'work', content: `live ${i}` });
        await page.waitForFunction((s) => window.seen[s] !== undefined, seq, { timeout: 10_000 });
        live.push((await page.evaluate((s) => window.seen[s], seq)) - t0);
        await new Promise((r) => setTimeout(r, 50));
      }
      await page.close();
      rows.push({ driver, load: pct(loads, 50), live50: pct(live, 50), live99: pct(live, 99) });
    } finally {
      await agent.close();
      web.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  await browser.close();
}

console.log(`\nagentbus web, ${MESSAGES} messages in the database; node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('driver   first screen (median of', LOADS, ')   live p50   live p99  (ms;', SAMPLES, 'live samples)');
const base = rows[0];
for (const r of rows) {
  console.log(
    `${r.driver.padEnd(8)} ${String(r.load).padStart(10)}${r === base ? '' : ` (x${(r.load / base.load).toFixed(2)})`}      ${String(r.live50).padStart(8)}${r === base ? '' : ` (x${(r.live50 / base.live50).toFixed(2)})`}   ${String(r.live99).padStart(8)}`,
  );
}
