/**
 * Direct messages in the web console, in a real chromium against real
 * `agentbus mcp` and `agentbus web` processes (issue 22, item 5): a person
 * sees the conversations between agents, sends a direct message to one
 * agent, and watches its read state go unread -> delivered -> acknowledged
 * live; the API refuses a body field it does not know, naming it.
 */
import { describe, expect, it } from 'vitest';
import { testDriverName } from '../support/test-driver.js';
import { artifactPath } from './browser.js';
import { messageLi, openConsole, stillLoadedOnce } from './console-page.js';
import { rawRequest } from './web-console.js';

type Json = Record<string, any>;

describe('direct messages in the web console', () => {
  it('shows the conversations between agents, sends a direct message to one, and shows its read state changing live', async () => {
    const { agents, page, web } = await openConsole();
    const ask = (await agents.call('send', { as: 'Alice', to: ['Bob'], content: 'Bob, run the tests on your branch' })) as Json;
    const answer = (await agents.call('send', { as: 'Bob', to: ['Alice'], content: 'all green', reply_to: ask.seq })) as Json;

    // All channels shows them, marked with their addressees and read states.
    await messageLi(page, ask.seq).waitFor();
    await expect(messageLi(page, ask.seq).locator(':scope > .meta .channel-name').textContent()).resolves.toBe('direct → Bob');
    await expect(messageLi(page, ask.seq).locator(':scope > .meta .read-state').getAttribute('data-state')).resolves.toBe('unread');

    // The conversation is listed; choosing it shows just that exchange, the answer under the question.
    const conversation = page.locator('#channels li.conversation[data-between="Alice,Bob"]');
    await conversation.waitFor();
    await conversation.click();
    await page.locator('#channel-title', { hasText: 'Direct: Alice ↔ Bob' }).waitFor();
    await page.locator(`#messages li.reply[data-seq="${answer.seq}"]`).waitFor();
    await expect(page.locator('#messages .content', { hasText: 'first message' }).count()).resolves.toBe(0);

    // Sending to one agent: the picker names the agents.
    await page.locator('#post-channel').selectOption('to:Bob');
    await page.locator('#post-text').fill('Bob, when you are done, tell me');
    await page.locator('#post-form button[type=submit]').click();
    await page.locator('#post-status', { hasText: /^sent \d+ to Bob as dana$/ }).waitFor();
    const posted = Number(/sent (\d+)/.exec((await page.locator('#post-status').textContent()) as string)?.[1]);
    // dana <-> Bob is a conversation of its own: the Alice <-> Bob view does not show it, All direct messages does.
    await page.locator('#channels li.conversation[data-between="Bob,dana"]').waitFor();
    await page.locator('#channels li.channel', { hasText: 'Direct messages' }).click();
    const mine = messageLi(page, posted);
    await mine.waitFor();
    const state = mine.locator('.read-state[data-name="Bob"]');
    await expect(state.getAttribute('data-state')).resolves.toBe('unread');

    // Bob receives: delivered; Bob acknowledges: acknowledged. The page is told, without a reload.
    const got = (await agents.call('receive', { as: 'Bob', wait_seconds: 0 })) as Json;
    expect(got.messages.filter((m: Json) => m.direct).map((m: Json) => [m.sender, m.content])).toEqual([
      ['Alice', 'Bob, run the tests on your branch'],
      ['dana', 'Bob, when you are done, tell me'],
    ]);
    await page.locator(`#messages li[data-seq="${posted}"] .read-state[data-name="Bob"][data-state="delivered"]`).waitFor({ timeout: 15_000 });
    await agents.call('receive', { as: 'Bob', ack: got.batch_token, wait_seconds: 0 });
    await page.locator(`#messages li[data-seq="${posted}"] .read-state[data-name="Bob"][data-state="acknowledged"]`).waitFor({ timeout: 15_000 });
    await page.locator(`#messages li[data-seq="${ask.seq}"] > .meta .read-state[data-state="acknowledged"]`).waitFor({ timeout: 15_000 });
    expect(await stillLoadedOnce(page)).toBe(true);
    await page.screenshot({ path: artifactPath(`direct-${testDriverName()}.png`), fullPage: true });

    // The API as the page calls it: read states ride along with every direct message.
    const listed = JSON.parse((await rawRequest(web.port, `/api/messages?token=${web.token}&between=Bob,dana`)).body) as Json;
    expect(listed.messages.map((m: Json) => [m.seq, m.read])).toEqual([
      [posted, [{ name: 'Bob', state: 'acknowledged', delivered_at: expect.any(String), acknowledged_at: expect.any(String) }]],
    ]);
  });

  it('refuses a body field it does not know, or an `as`, naming it, and stores nothing', async () => {
    const { web, page } = await openConsole();
    const last = async (): Promise<number> => (JSON.parse((await rawRequest(web.port, `/api/state?token=${web.token}`)).body) as Json).last_seq as number;
    const before = await last();
    const post = (body: Json) =>
      rawRequest(web.port, `/api/post?token=${web.token}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    for (const [body, field] of [
      [{ too: ['Bob'], content: 'misspelt' }, 'too'],
      [{ channel: 'general', content: 'as someone else', as: 'Alice' }, 'as'],
    ] as const) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.body) as Json).error).toMatchObject({ code: 'bad_request', field });
    }
    const unknownName = await post({ to: ['Bbo'], content: 'typo' });
    expect((JSON.parse(unknownName.body) as Json).error).toMatchObject({ code: 'not_found', field: 'to.0' });
    const both = await rawRequest(web.port, `/api/messages?token=${web.token}&direct=true&channel=general`);
    expect(both.status).toBe(400);
    expect((JSON.parse(both.body) as Json).error.field).toBe('direct');
    const edit = await rawRequest(web.port, `/api/edit-memory?token=${web.token}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"memory_id":1,"contents":"x"}' });
    expect((JSON.parse(edit.body) as Json).error).toMatchObject({ code: 'bad_request', field: 'contents' });
    expect(await last()).toBe(before);
    expect(await stillLoadedOnce(page)).toBe(true);
  });
});
