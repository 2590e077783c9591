import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../src/db/open/open-database.js';
import { startMcp } from '../support/mcp-process.js';
import { addMessages } from '../support/rows.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { launchBrowser } from './browser.js';
import { messageLi, openConsole } from './console-page.js';
import { rawRequest, startWeb } from './web-console.js';

/** Everything that went wrong while the page loaded: console errors, uncaught exceptions, failed or refused requests. */
function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
  page.on('pageerror', (e) => void problems.push(`exception: ${e.message}`));
  page.on('requestfailed', (r) => void (r.url().includes('/events') || problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`)));
  page.on('response', (r) => void (r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`)));
  return problems;
}

describe('agentbus web: loading, starting before any agent, paging back', () => {
  it('loads with its favicon and no console error, failed request or refused request', async () => {
    let favicon: Promise<{ status: number; type: string | undefined }> | undefined;
    let problems: string[] = [];
    const { page, web } = await openConsole((p) => {
      problems = collectProblems(p);
      favicon = p.waitForResponse((r) => /\/favicon\./.test(r.url())).then((r) => ({ status: r.status(), type: r.headers()['content-type'] }));
    });
    await expect(favicon).resolves.toEqual({ status: 200, type: 'image/svg+xml' });
    await page.locator('#tabs button[data-tab=memories]').click();
    await page.locator('#tabs button[data-tab=messages]').click();
    expect(problems).toEqual([]);
    // The icon is one of the page's own files: it too needs the token.
    expect((await rawRequest(web.port, '/favicon.svg')).status).toBe(403);
  });

  it('starts on a data directory with no database, says no agent has started, and goes live when the first agent starts, without creating the database', async () => {
    const dir = tempDir();
    // The config file the test processes are pointed at (AGENTBUS_CONFIG); nothing else is in the directory.
    writeFileSync(join(dir, 'config.json'), '{}');
    const web = await startWeb(dir);
    const page = await (await launchBrowser()).newPage();
    const problems = collectProblems(page);
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    await page.goto(web.url);
    await page.locator('#connection', { hasText: 'waiting for the first agent' }).waitFor();
    await expect(page.locator('#waiting').textContent()).resolves.toMatch(/no agent has started yet/);
    const state = await rawRequest(web.port, `/api/state?token=${web.token}`);
    expect(state.status).toBe(503);
    expect(JSON.parse(state.body).error.code).toBe('no_database');
    // Many looks later, still no database: only an agent makes it.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(false);

    const agent = await startMcp(dir);
    await agent.call('register', { name: 'Alice' });
    const sent = (await agent.call('send', { as: 'Alice', channel: 'general', content: 'the first agent is here' })) as { seq: number };
    await page.locator('#connection', { hasText: 'live' }).waitFor();
    await messageLi(page, sent.seq).locator('.content', { hasText: 'the first agent is here' }).waitFor();
    await page.locator('#sessions li', { hasText: 'Alice' }).waitFor();
    expect(await page.locator('#waiting').isHidden()).toBe(true);
    expect(navigations).toBe(1);
    // The 503s of the wait were the test's, not the page's.
    expect(problems).toEqual([]);
  });

  it('pages back to the first message of a 5,000-message channel and of all channels, keeping the row in view', async () => {
    const dir = tempDir();
    const agent = await startMcp(dir);
    await agent.call('register', { name: 'Alice' });
    await agent.call('create_channel', { as: 'Alice', name: 'big', kind: 'ordinary' });
    const first = (await agent.call('send', { as: 'Alice', channel: 'general', content: 'the very first message' })) as { seq: number };
    const { db } = await openTestDatabase(dir);
    const seqs = addMessages(db, 'big', 5000, Date.now(), (i) => `big message ${i}`);
    db.close();
    const web = await startWeb(dir);
    const page = await (await launchBrowser()).newPage();
    await page.goto(web.url);
    await page.locator('#connection', { hasText: 'live' }).waitFor();

    const rowCount = () => page.locator('#messages > li').count();
    const pageBack = async (): Promise<number> => {
      let clicks = 0;
      while (await page.locator('#older').isVisible()) {
        // The row at the top of the view now stays where it is while older rows go in above it.
        await page.locator('#older').scrollIntoViewIfNeeded();
        const before = await page.locator('#messages > li').first().evaluate((li) => ({ seq: li.getAttribute('data-seq') as string, top: li.getBoundingClientRect().top }));
        await page.locator('#older').click();
        const anchor = page.locator(`#messages > li[data-seq="${before.seq}"]`);
        await anchor.and(page.locator('#messages > li:not(:first-child)')).waitFor({ state: 'attached' });
        expect(Math.abs((await anchor.evaluate((li) => li.getBoundingClientRect().top)) - before.top)).toBeLessThan(2);
        clicks++;
      }
      return clicks;
    };

    await page.locator('#channels li', { hasText: '#big' }).click();
    await page.locator('#messages > li').nth(199).waitFor({ state: 'attached' });
    expect(await pageBack()).toBe(24);
    expect(await rowCount()).toBe(5000);
    await expect(page.locator('#messages > li').first().getAttribute('data-seq')).resolves.toBe(String(seqs[0]));
    await expect(page.locator('#messages > li').first().locator('.content').textContent()).resolves.toBe('big message 0');
    await page.locator('#history-start').waitFor();

    await page.locator('#channels li', { hasText: 'All channels' }).click();
    await page.locator(`#messages li[data-seq="${seqs.at(-1)}"]`).waitFor({ state: 'attached' });
    await pageBack();
    expect(await rowCount()).toBe(5001);
    await expect(page.locator('#messages > li').first().getAttribute('data-seq')).resolves.toBe(String(first.seq));

    // Scrolled up into the history, a live message does not move the view.
    await messageLi(page, seqs[2500] as number).scrollIntoViewIfNeeded();
    const y = await page.evaluate('window.scrollY');
    const live = (await agent.call('send', { as: 'Alice', channel: 'big', content: 'live while scrolled up' })) as { seq: number };
    await messageLi(page, live.seq).waitFor({ state: 'attached' });
    expect(await page.evaluate('window.scrollY')).toBe(y);
    // 52 pages through two 5,000-row lists in a shared machine's chromium: minutes, not the default minute.
  }, 300_000);

  it('refuses a bad paging parameter with a 400 naming it, and an unknown channel with a 404', async () => {
    const { web } = await openConsole();
    const ask = async (query: string) => {
      const answer = await rawRequest(web.port, `/api/messages?token=${web.token}&${query}`);
      return { status: answer.status, ...(JSON.parse(answer.body).error as { code: string; field?: string }) };
    };
    const bad = { status: 400, code: 'bad_request' };
    await expect(ask('before=abc')).resolves.toMatchObject({ ...bad, field: 'before' });
    await expect(ask('before=0')).resolves.toMatchObject({ ...bad, field: 'before' });
    await expect(ask('before=-5')).resolves.toMatchObject({ ...bad, field: 'before' });
    await expect(ask('limit=1001')).resolves.toMatchObject({ ...bad, field: 'limit' });
    await expect(ask('limit=2.5')).resolves.toMatchObject({ ...bad, field: 'limit' });
    await expect(ask('before=5&before=6')).resolves.toMatchObject({ ...bad, field: 'before' });
    await expect(ask('channel=no%20such')).resolves.toMatchObject({ ...bad, field: 'channel' });
    await expect(ask('befor=5')).resolves.toMatchObject({ ...bad, field: 'befor' });
    await expect(ask('channel=nowhere')).resolves.toMatchObject({ status: 404, code: 'not_found', field: 'channel' });
    const good = JSON.parse((await rawRequest(web.port, `/api/messages?token=${web.token}&channel=general&limit=1`)).body);
    expect(good).toMatchObject({ messages: [{ content: 'first message' }], has_more: false });
  });
});
