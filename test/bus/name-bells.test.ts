/**
 * Per-name bells (src/bus/announcer.ts, change-waiter.ts): a commit of direct
 * messages wakes the servers of their addressees and the readers of every
 * message, and nobody else; anything else wakes everyone. Real database, real
 * file-system watches, waits far beyond the test timeout so only a bell can
 * end them.
 */
import { describe, expect, it } from 'vitest';
import { createAnnouncer } from '../../src/bus/announcer.js';
import { createChangeWaiter, type ChangeFeed } from '../../src/bus/change-waiter.js';
import { register } from '../../src/bus/identity.js';
import { editMemory } from '../../src/bus/memories.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import { createBus } from '../support/bus.js';

const FAR = 10 * 60_000;

/** Counts the hints of `feed`. */
function hints(feed: ChangeFeed): { count(): number } {
  let n = 0;
  feed.onChange(() => n++);
  return { count: () => n };
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 300));

describe('per-name bells', () => {
  it("wakes a direct message's addressees and the readers of all mail, never a bystander; a channel message wakes everyone", async () => {
    const bus = await createBus();
    const writer = await bus.process('writer');
    const announce = createAnnouncer(writer.db, bus.dir);
    const ann = { ...writer, announce };
    register(ann, { name: 'Ann' });
    const kimCtx = await bus.process('kim');
    const leeCtx = await bus.process('lee');
    register(kimCtx, { name: 'Kim' });
    register(kimCtx, { name: 'task', parent: 'Kim' });
    register(leeCtx, { name: 'Lee' });
    const kim = createChangeWaiter(bus.dir, FAR);
    const lee = createChangeWaiter(bus.dir, FAR);
    const tail = createChangeWaiter(bus.dir, FAR, { direct: true });
    try {
      kim.watchNames(['Kim', 'Kim/task']);
      lee.watchNames(['Lee']);
      const [k, l, t] = [hints(kim), hints(lee), hints(tail)];

      await send(ann, { as: 'Ann', to: ['Kim/task'], content: 'for the sub-agent' });
      await settle();
      expect([k.count() > 0, l.count(), t.count() > 0]).toEqual([true, 0, true]);

      // A waiting receive of the addressee is woken by its bell (the waiter is the one its server waits on).
      const waiting = receive({ ...kimCtx }, { as: 'Kim', wait_seconds: 60 }, { waiter: kim });
      await settle();
      await send(ann, { as: 'Ann', to: ['Kim'], content: 'are you there?' });
      const got = await waiting;
      expect(got.messages.map((m) => m.content)).toEqual(['are you there?']);
      expect(l.count()).toBe(0);

      // A name the server no longer holds is not watched: its bell is not heard.
      lee.watchNames([]);
      await send(ann, { as: 'Ann', to: ['Lee'], content: 'Lee is gone' });
      await settle();
      expect(l.count()).toBe(0);

      await send(ann, { as: 'Ann', channel: 'general', content: 'to everyone' });
      await settle();
      expect(l.count()).toBeGreaterThan(0);
    } finally {
      for (const w of [kim, lee, tail]) w.close();
    }
  });

  it('rings the shared bell for a commit that is not only direct messages (a memory edit)', async () => {
    const bus = await createBus();
    const writer = await bus.process('writer');
    const ann = { ...writer, announce: createAnnouncer(writer.db, bus.dir) };
    register(ann, { name: 'Ann' });
    register(await bus.process('kim'), { name: 'Kim' });
    const { memory_id: id } = (await send(ann, { as: 'Ann', channel: 'memory', content: 'a note' })) as { memory_id: number };
    const everyone = createChangeWaiter(bus.dir, FAR);
    try {
      const e = hints(everyone);
      await editMemory(ann, { as: 'Ann', memory_id: id, content: 'the note, edited' });
      await settle();
      expect(e.count()).toBeGreaterThan(0);
    } finally {
      everyone.close();
    }
  });
});
