#!/usr/bin/env node
// The web console (`agentbus web`) in Debian's chromium, every driver in one run:
//   load   page load to the first screen (the newest messages listed and the
//          event stream live) with --messages rows (default 100,000) in the
//          database, median of fresh pages
//   live   a message's commit (its created_at, stamped in the writing
//          `agentbus mcp` process) -> its row in the open page's DOM, and -> the
//          next frame after it (layout and paint done), p50/p99, in three cases:
//            10 rows     a channel with 10 messages on the page
//            5,000 rows  the big channel paged back until 5,000 rows are on the page
//            60 KB       60 KB messages of one unbroken character, on the 10-row channel
//                        (each sample adds one more: up to --samples of them on the page)
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

const { openDatabase } = await import('../dist/src/db/open/open-database.js');
const { loadDriver } = await import('../dist/src/db/open/select-driver.js');
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
      if (m) resolve({ url: m[0], stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGINT'))) });
    });
    child.on('exit', (code) => reject(new Error(`agentbus web exited ${code}: ${out}`)));
  });
}

async function seed(dir, driver) {
  const agent = await startMcp(dir, driver);
  await agent.call('register', { name: 'Alice' });
  await agent.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
  await agent.call('create_channel', { as: 'Alice', name: 'small', kind: 'ordinary' });
  for (let i = 0; i < 10; i++) await agent.call('send', { as: 'Alice', channel: 'small', content: `small ${i}` });
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
        // Stamps each row as it enters the DOM, and again at the frame after (style, layout and paint of it done).
        window.seen = {};
        new MutationObserver((records) => {
          const now = Date.now();
          for (const r of records)
            for (const node of r.addedNodes) {
              if (node.nodeType !== 1 || !node.matches('li[data-seq]')) continue;
              const committed = Date.parse(node.querySelector('time').getAttribute('datetime'));
              const entry = (window.seen[node.dataset.seq] ??= { committed, dom: now });
              requestAnimationFrame(() => setTimeout(() => (entry.frame = Date.now()), 0));
            }
        }).observe(document.getElementById('messages'), { childList: true, subtree: true });
      });
      const measure = async (channel, content) => {
        process.stderr.write(`${driver}: measuring on #${channel}\n`);
        const dom = [];
        const frame = [];
        for (let i = 0; i < SAMPLES; i++) {
          const { seq } = await agent.call('send', { as: 'Carol', channel, content: content(i) });
          await page.waitForFunction((s) => window.seen[s]?.frame !== undefined, String(seq), { timeout: 30_000 });
          const seen = await page.evaluate((s) => window.seen[s], String(seq));
          dom.push(seen.dom - seen.committed);
          frame.push(seen.frame - seen.committed);
          await new Promise((r) => setTimeout(r, 50));
        }
        return { dom50: pct(dom, 50), dom99: pct(dom, 99), frame50: pct(frame, 50), frame99: pct(frame, 99) };
      };
      await page.locator('#channels li', { hasText: '#small ' }).click();
      await page.locator('#messages > li').nth(9).waitFor({ state: 'attached' });
      const small = await measure('small', (i) => `live ${i}`);
      const long = await measure('small', () => 'x'.repeat(60 * 1024));
      await page.locator('#channels li', { hasText: '#work ' }).click();
      await page.locator('#messages > li').nth(199).waitFor({ state: 'attached' });
      while ((await page.locator('#messages > li').count()) < Math.min(5000, MESSAGES)) {
        const n = await page.locator('#messages > li').count();
        await page.locator('#older').click();
        await page.waitForFunction((k) => document.querySelectorAll('#messages > li').length > k, n);
      }
      const shown = await page.locator('#messages > li').count();
      process.stderr.write(`${driver}: ${shown} rows on the page\n`);
      const big = await measure('work', (i) => `live ${i}`);
      await page.close();
      rows.push({ driver, load: pct(loads, 50), cases: [['10 rows', small], [`${shown} rows`, big], ['60 KB', long]] });
    } finally {
      await agent.close();
      await web.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  await browser.close();
}

console.log(`\nagentbus web, ${MESSAGES} messages in the database; node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('first screen (median of', LOADS, 'loads), then commit -> row in the DOM and -> the frame after it, p50/p99 (ms;', SAMPLES, 'samples each)');
const base = rows[0];
for (const r of rows) console.log(`${r.driver.padEnd(8)} first screen ${r.load} ms${r === base ? '' : ` (x${(r.load / base.load).toFixed(2)})`}`);
for (const [i, [name]] of base.cases.entries()) {
  for (const r of rows) {
    const c = r.cases[i][1];
    console.log(`  ${r.driver.padEnd(8)} ${r.cases[i][0].padEnd(11)} DOM ${String(c.dom50).padStart(5)} / ${String(c.dom99).padStart(5)}   frame ${String(c.frame50).padStart(5)} / ${String(c.frame99).padStart(5)}${name === r.cases[i][0] ? '' : ''}`);
  }
}
