/**
 * The console open in chromium over a small bus (two agents, an ordinary and
 * a memory channel), and what the browser tests look at on the page.
 */
import type { Page } from 'playwright-core';
import { startMcp, type McpProcess } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { launchBrowser } from './browser.js';
import { startWeb, type WebConsole } from './web-console.js';

/** What the tests leave on the page's global object (functions given to page.evaluate run in the page). */
export interface PageMarks {
  loadedOnce?: boolean;
  pwned?: number;
}

/** Alice and Bob on `general` (Bob subscribed) and a memory channel `notes`, the console, and the page open and live; `beforeLoad` sees the page before it is loaded. */
export async function openConsole(beforeLoad?: (page: Page) => void): Promise<{ dir: string; agents: McpProcess; web: WebConsole; page: Page }> {
  const dir = tempDir();
  const agents = await startMcp(dir);
  await agents.call('register', { name: 'Alice' });
  await agents.call('register', { name: 'Bob' });
  await agents.call('create_channel', { as: 'Alice', name: 'general', kind: 'ordinary' });
  await agents.call('create_channel', { as: 'Alice', name: 'notes', kind: 'memory' });
  await agents.call('subscribe', { as: 'Bob', channel: 'general' });
  await agents.call('send', { as: 'Alice', channel: 'general', content: 'first message' });
  const web = await startWeb(dir);
  const context = await launchBrowser();
  const page = await context.newPage();
  beforeLoad?.(page);
  await page.goto(web.url);
  await page.locator('#connection', { hasText: 'live' }).waitFor();
  await page.locator('#messages .content', { hasText: 'first message' }).waitFor();
  // Set once: a reload or a navigation would lose it.
  await page.evaluate(() => ((globalThis as typeof globalThis & PageMarks).loadedOnce = true));
  return { dir, agents, web, page };
}

export const messageLi = (page: Page, seq: number) => page.locator(`#messages li[data-seq="${seq}"]`);
export const stillLoadedOnce = (page: Page): Promise<unknown> => page.evaluate(() => (globalThis as typeof globalThis & PageMarks).loadedOnce);
