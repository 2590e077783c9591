import { describe, expect, it } from 'vitest';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { startMcp } from '../support/mcp-process.js';
import { testDriverName } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';
import { artifactPath } from './browser.js';
import { messageLi, openConsole, stillLoadedOnce, type PageMarks } from './console-page.js';

const shot = (name: string): string => artifactPath(`${name}-${testDriverName()}.png`);

describe('agentbus web in a real browser', () => {
  it('shows a message a separate agentbus mcp process sends, live through the event stream, without reloading the page', async () => {
    const { dir, page } = await openConsole();
    const carol = await startMcp(dir);
    await carol.call('register', { name: 'Carol' });
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    for (const content of ['live one', 'live two']) {
      const sent = (await carol.call('send', { as: 'Carol', channel: 'general', content })) as { seq: number };
      // The page has no timer and does not reload (counted below): only the event stream can bring
      // the row. How fast it comes (the "within a second") is a speed target, measured by
      // `npm run bench:web` (send -> row p50/p99, docs/performance.md), not timed in a test.
      await messageLi(page, sent.seq).waitFor({ timeout: 15_000 });
      await expect(messageLi(page, sent.seq).locator('.content').textContent()).resolves.toBe(content);
      await expect(messageLi(page, sent.seq).locator('.sender').textContent()).resolves.toBe('Carol');
    }
    expect(navigations).toBe(0);
    expect(await stillLoadedOnce(page)).toBe(true);
    await page.screenshot({ path: shot('messages'), fullPage: true });
  });

  it("posts and replies from the page through a real send: an agent's receive gets both", async () => {
    const { agents, page } = await openConsole();
    await page.locator('#post-channel').selectOption('general');
    await page.locator('#post-text').fill('please pause the deploy');
    await page.locator('#post-form button[type=submit]').click();
    await page.locator('#post-status', { hasText: /^sent \d+ as dana$/ }).waitFor();
    const posted = Number(/sent (\d+)/.exec((await page.locator('#post-status').textContent()) as string)?.[1]);

    await messageLi(page, posted).waitFor();
    await messageLi(page, posted).locator('.reply-button').click();
    await page.locator('#post-text').fill('and tell me when it is paused');
    await page.locator('#post-form button[type=submit]').click();
    await page.locator('#post-status', { hasText: /^sent \d+ as dana$/ }).filter({ hasNotText: `sent ${posted} ` }).waitFor();
    await page.locator(`#messages li.reply .content`, { hasText: 'and tell me when it is paused' }).waitFor();

    const got = toolAnswer(ReceiveOutput, await agents.call('receive', { as: 'Bob', wait_seconds: 0 }), 'receive');
    const fromPage = got.messages.filter((m) => m.sender === 'dana');
    expect(fromPage.map((m) => [m.content, m.reply_to])).toEqual([
      ['please pause the deploy', null],
      ['and tell me when it is paused', posted],
    ]);
    expect(fromPage[0]?.seq).toBe(posted);
    // The name was registered for each send only.
    const sessions = (await agents.call('discover', { as: 'Bob' })) as { sessions: { display_name: string }[] };
    expect(sessions.sessions.map((s) => s.display_name).sort()).toEqual(['Alice', 'Bob']);
    expect(await stillLoadedOnce(page)).toBe(true);
  });

  it('edits a memory on the page: get_memory returns the new revision; history shows both; delete is what get_memory then reports', async () => {
    const { agents, page } = await openConsole();
    const stored = (await agents.call('send', { as: 'Alice', channel: 'notes', content: 'the staging password rotates on Mondays' })) as { memory_id: number };
    await page.locator('#tabs button[data-tab=memories]').click();
    const memory = page.locator(`#memories li[data-memory-id="${stored.memory_id}"]`);
    await memory.locator('.content', { hasText: 'Mondays' }).waitFor();
    await memory.locator('.edit-button').click();
    await memory.locator('.edit-text').fill('the staging password rotates on Tuesdays');
    await memory.locator('.save-button').click();
    await memory.locator('.content', { hasText: 'Tuesdays' }).waitFor();

    const live = (await agents.call('get_memory', { as: 'Alice', memory_id: stored.memory_id })) as { content: string; revision: number; sender: string };
    expect(live).toMatchObject({ content: 'the staging password rotates on Tuesdays', revision: 2, sender: 'dana' });

    await memory.locator('.history-button').click();
    await memory.locator('.revisions li').nth(1).waitFor();
    expect(await memory.locator('.revisions .content').allTextContents()).toEqual(['the staging password rotates on Mondays', 'the staging password rotates on Tuesdays']);
    await page.screenshot({ path: shot('memories'), fullPage: true });

    page.once('dialog', (dialog) => void dialog.accept());
    await memory.locator('.delete-button').click();
    await memory.waitFor({ state: 'detached' });
    const gone = await agents.call('get_memory', { as: 'Alice', memory_id: stored.memory_id });
    expect(gone).toMatchObject({ error: { code: 'not_found' } });
  });

  it("shows an agent's markup as text: no element is made and no script runs, in messages, memories and search", async () => {
    const { agents, page } = await openConsole();
    const markup = '<img src=x onerror="window.pwned=1"><b>bold</b><script>window.pwned=2</script>';
    const sent = (await agents.call('send', { as: 'Alice', channel: 'general', content: markup })) as { seq: number };
    await agents.call('send', { as: 'Alice', channel: 'notes', content: `note ${markup}` });
    await messageLi(page, sent.seq).waitFor();
    await expect(messageLi(page, sent.seq).locator('.content').textContent()).resolves.toBe(markup);
    await page.locator('#tabs button[data-tab=memories]').click();
    await page.locator('#memories .content', { hasText: 'note <img' }).waitFor();
    await page.locator('#tabs button[data-tab=search]').click();
    await page.locator('#search-query').fill('onerror pwned');
    await page.locator('#search-form button[type=submit]').click();
    await page.locator('#search-results .content').nth(1).waitFor();
    expect((await page.locator('#search-results .content').allTextContents()).sort()).toEqual([markup, `note ${markup}`]);
    expect(await page.locator('img, b, main script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as typeof globalThis & PageMarks).pwned)).toBeUndefined();
    await page.screenshot({ path: shot('search'), fullPage: true });
  });
});
