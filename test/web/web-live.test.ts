import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { messageLi, openConsole } from './console-page.js';

/** The shape of the subtree at `selector`: tags, attributes and text, in order (what a person sees and what tests select on). */
function shapeOf(page: Page, selector: string): Promise<unknown> {
  return page.locator(selector).evaluate((root) => {
    type Shape = { nodeType: number; textContent: string | null; tagName: string; attributes: ArrayLike<{ name: string; value: string }>; childNodes: ArrayLike<Shape> };
    const TEXT_NODE = 3;
    const walk = (node: Shape): unknown =>
      node.nodeType === TEXT_NODE ? node.textContent : [node.tagName, Array.from(node.attributes, (a) => `${a.name}=${a.value}`).sort(), Array.from(node.childNodes, walk)];
    return walk(root as unknown as Shape);
  });
}

const memoryLi = (page: Page, id: number) => page.locator(`#memories li[data-memory-id="${id}"]`);

/** What the open editor's textarea carries across updates (set on the element itself: a rebuilt row would not have it). */
interface EditorMark {
  mark?: string;
}

describe('agentbus web: rows change in place and agree with a reload', () => {
  it("keeps an open memory edit (text, focus, selection) and an open revision list through 10 agents' memory events", async () => {
    const { agents, page } = await openConsole();
    const memory = async (content: string): Promise<number> => ((await agents.call('send', { as: 'Alice', channel: 'notes', content })) as { memory_id: number }).memory_id;
    const a = await memory('deploys are frozen on Fridays');
    const b = await memory('the staging host is db-2');
    const c = await memory('ask Bob before touching CI');
    await page.locator('#tabs button[data-tab=memories]').click();
    await memoryLi(page, c).waitFor();

    await memoryLi(page, b).locator('.history-button').click();
    await memoryLi(page, b).locator('.revisions li').first().waitFor();
    await memoryLi(page, a).locator('.edit-button').click();
    const editor = memoryLi(page, a).locator('.edit-text');
    await editor.fill('deploys are frozen on Fridays and on holidays (my unsaved words)');
    await editor.evaluate((t) => {
      (t as typeof t & EditorMark).mark = 'the same element';
      (t as unknown as { setSelectionRange(a: number, b: number): void }).setSelectionRange(8, 14);
    });

    // Ten memory events: edits of the memory being edited and of the one whose revisions are open, new memories, a delete.
    const edit = (memory_id: number, content: string) => agents.call('edit_memory', { as: 'Bob', memory_id, content });
    await edit(b, 'the staging host is db-3');
    await edit(a, 'deploys are frozen on Fridays (agreed)');
    const d = await memory('the release branch is release/7');
    await edit(b, 'the staging host is db-4');
    await agents.call('delete_memory', { as: 'Bob', memory_id: c });
    const e = await memory('nightly builds run at 02:00');
    await edit(d, 'the release branch is release/8');
    await edit(a, 'deploys are frozen on Fridays (agreed twice)');
    const f = await memory('the on-call phone is with Alice');
    await edit(b, 'the staging host is db-5');

    await memoryLi(page, b).locator(':scope > .content', { hasText: 'db-5' }).waitFor();
    await memoryLi(page, c).waitFor({ state: 'detached' });
    await memoryLi(page, b).locator('.revisions li', { hasText: 'db-5' }).waitFor();
    const kept = await editor.evaluate((node) => {
      const t = node as unknown as EditorMark & { value: string; selectionStart: number; selectionEnd: number; ownerDocument: { activeElement: unknown } };
      return { mark: t.mark, value: t.value, focused: t.ownerDocument.activeElement === t, selection: [t.selectionStart, t.selectionEnd] };
    });
    expect(kept).toEqual({ mark: 'the same element', value: 'deploys are frozen on Fridays and on holidays (my unsaved words)', focused: true, selection: [8, 14] });
    await expect(memoryLi(page, a).locator('.edit-note').textContent()).resolves.toMatch(/revision 3/);
    // The open revision list stayed open and follows the edits.
    expect(await memoryLi(page, b).locator('.revisions .content').allTextContents()).toEqual([
      'the staging host is db-2',
      'the staging host is db-3',
      'the staging host is db-4',
      'the staging host is db-5',
    ]);
    // The order a reload lists: newest revision first.
    const order = await page.locator('#memories > li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-memory-id'))));
    expect(order).toEqual([b, f, a, d, e]);

    await memoryLi(page, a).locator('.save-button').click();
    await memoryLi(page, a).locator(':scope > .content', { hasText: 'my unsaved words' }).waitFor();
    await expect(agents.call('get_memory', { as: 'Alice', memory_id: a })).resolves.toMatchObject({ content: 'deploys are frozen on Fridays and on holidays (my unsaved words)', revision: 4 });
  });

  it('after edit, edit and delete of a memory the live page equals a freshly loaded one, messages and memories', async () => {
    const { agents, page, web } = await openConsole();
    await page.locator('#tabs button[data-tab=memories]').click();
    const store = async (content: string): Promise<{ memory_id: number; seq: number }> => (await agents.call('send', { as: 'Alice', channel: 'notes', content })) as { memory_id: number; seq: number };
    const gone = await store('the build cache lives in /tmp/cache');
    const kept = await store('the linter is strict about imports');
    await agents.call('edit_memory', { as: 'Bob', memory_id: gone.memory_id, content: 'the build cache lives in /var/cache' });
    await agents.call('edit_memory', { as: 'Alice', memory_id: gone.memory_id, content: 'the build cache lives in ~/.cache' });
    await agents.call('edit_memory', { as: 'Bob', memory_id: kept.memory_id, content: 'the linter is strict about imports and names' });
    const question = (await agents.call('send', { as: 'Alice', channel: 'general', content: 'where is the cache?' })) as { seq: number };
    await agents.call('send', { as: 'Bob', channel: 'general', content: 'see the notes', reply_to: question.seq });
    await agents.call('delete_memory', { as: 'Alice', memory_id: gone.memory_id });
    // Events come in commit order, and a look reports the tombstones it sees with the rows: after this row, everything before it is shown.
    const last = (await agents.call('send', { as: 'Alice', channel: 'general', content: 'done' })) as { seq: number };
    await messageLi(page, last.seq).waitFor({ state: 'attached' });
    await memoryLi(page, gone.memory_id).waitFor({ state: 'detached' });

    const reloaded = await page.context().newPage();
    await reloaded.goto(web.url);
    await reloaded.locator('#connection', { hasText: 'live' }).waitFor();
    await messageLi(reloaded, last.seq).waitFor({ state: 'attached' });
    await reloaded.locator('#tabs button[data-tab=memories]').click();
    await memoryLi(reloaded, kept.memory_id).waitFor();

    expect(await shapeOf(page, '#messages')).toEqual(await shapeOf(reloaded, '#messages'));
    expect(await shapeOf(page, '#memories')).toEqual(await shapeOf(reloaded, '#memories'));
    // And what they agree on: no revision of the deleted memory, only the live one of the edited memory, the reply in its thread.
    const contents = await page.locator('#messages .content').allTextContents();
    expect(contents.filter((t) => t.includes('build cache'))).toEqual([]);
    expect(contents.filter((t) => t.includes('linter'))).toEqual(['the linter is strict about imports and names']);
    await expect(messageLi(page, question.seq).locator('.replies .content').textContent()).resolves.toBe('see the notes');
  });

  it('memory events that arrive while the memories listing is on its way are not lost: the page ends as a reload shows it', async () => {
    const { agents, page, web } = await openConsole();
    const store = async (content: string): Promise<{ memory_id: number; seq: number }> => (await agents.call('send', { as: 'Alice', channel: 'notes', content })) as { memory_id: number; seq: number };
    const first = await store('the first memory, before the tab opens');
    // The listing is read by the server at once and handed to the page only after the writes below
    // (a slow network): its snapshot is older than the events the page gets meanwhile.
    let snapshotTaken!: () => void;
    const taken = new Promise<void>((resolve) => (snapshotTaken = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/memories?*', async (route) => {
      const response = await route.fetch();
      snapshotTaken();
      await released;
      await route.fulfill({ response });
    });
    await page.locator('#tabs button[data-tab=memories]').click();
    await taken;
    const stored = [];
    for (let i = 0; i < 4; i++) stored.push(await store(`memory ${i}, stored while the listing is held`));
    await agents.call('edit_memory', { as: 'Bob', memory_id: first.memory_id, content: 'the first memory, edited' });
    const deleted = (stored[0] as { memory_id: number }).memory_id;
    await agents.call('delete_memory', { as: 'Bob', memory_id: deleted });
    const last = await store('the last memory');
    await messageLi(page, last.seq).waitFor({ state: 'attached' });
    release();
    await memoryLi(page, last.memory_id).waitFor();

    const reloaded = await page.context().newPage();
    await reloaded.goto(web.url);
    await reloaded.locator('#connection', { hasText: 'live' }).waitFor();
    await reloaded.locator('#tabs button[data-tab=memories]').click();
    await memoryLi(reloaded, last.memory_id).waitFor();
    expect(await shapeOf(page, '#memories')).toEqual(await shapeOf(reloaded, '#memories'));
    const shown = await page.locator('#memories > li').evaluateAll((lis) => lis.map((li) => Number(li.getAttribute('data-memory-id'))));
    expect(shown).toEqual([last.memory_id, first.memory_id, ...stored.slice(1).map((m) => m.memory_id).reverse()]);
  });

  it('wraps 60 KB of one unbroken character inside its row: the page does not grow sideways', async () => {
    const { agents, page } = await openConsole();
    const long = 'x'.repeat(60 * 1024);
    const sent = (await agents.call('send', { as: 'Alice', channel: 'general', content: long })) as { seq: number };
    await messageLi(page, sent.seq).waitFor();
    const sizes = await messageLi(page, sent.seq).locator('.content').evaluate((node) => {
      const content = node as unknown as { textContent: string; getBoundingClientRect(): { width: number }; ownerDocument: Record<string, { clientWidth: number; scrollWidth: number }> & { querySelector(s: string): { clientWidth: number } } };
      const doc = content.ownerDocument;
      return { text: content.textContent.length, content: content.getBoundingClientRect().width, main: doc.querySelector('main').clientWidth, page: (doc.documentElement as { scrollWidth: number }).scrollWidth, window: (doc.documentElement as { clientWidth: number }).clientWidth };
    });
    expect(sizes.text).toBe(long.length);
    expect(sizes.content).toBeLessThanOrEqual(sizes.main);
    expect(sizes.page).toBeLessThanOrEqual(sizes.window);
  });
});
