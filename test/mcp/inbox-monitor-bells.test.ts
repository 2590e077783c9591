/**
 * The inbox monitor and the per-name bells, in process over a real database
 * and real bell watches (change-waiter.ts), or on a `wakeups: 'notify'`
 * database the notifications of each connection's wake source: a direct message makes the
 * addressee's monitor look at once (so its channel event is not left to the
 * poll), and the monitor of a name it is not for does not look at all.
 * Polls are set far beyond the test, so only a bell can cause a look.
 */
import { describe, expect, it } from 'vitest';
import { createChangeWaiter } from '../../src/bus/change-waiter.js';
import { register } from '../../src/bus/identity.js';
import { send } from '../../src/bus/send.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import type { ChannelNotification } from '../../src/mcp/channel-push.js';
import { createInboxMonitor } from '../../src/mcp/inbox-monitor.js';
import { createBus } from '../support/bus.js';
import { foreignProcess } from '../support/process-identities.js';
import { wakeSourcesListening } from '../support/wake-listeners.js';

const FAR = 3_600_000;
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 400));

describe('inbox monitor and per-name bells', () => {
  it("looks at once for its own names' direct messages and never for others'", async () => {
    const bus = await createBus();
    const writerFeed = createChangeWaiter(bus.dir, FAR);
    const writer = await bus.process('writer', { announce: (to) => writerFeed.announce(to) });
    register(writer, { name: 'Ann' });
    const monitors = [];
    const pushed = new Map<string, ChannelNotification[]>();
    const feeds = [];
    for (const name of ['Kim', 'Lee']) {
      const ctx = await bus.process(`owner-${name}`);
      register(ctx, { name });
      const feed = createChangeWaiter(bus.dir, FAR, { wakeSource: ctx.db.wakeSource });
      feeds.push(feed);
      pushed.set(name, []);
      const monitor = createInboxMonitor({ ctx, dataDir: bus.dir, feed, server: currentProcess(), harness: foreignProcess(), pollMs: FAR, push: (n) => pushed.get(name)!.push(n) });
      monitor.refresh();
      monitors.push(monitor);
    }
    const [kim, lee] = monitors as [ReturnType<typeof createInboxMonitor>, ReturnType<typeof createInboxMonitor>];
    try {
      await wakeSourcesListening(writer.db, 2);
      const before = { kim: kim.counts().looks, lee: lee.counts().looks };
      await send(writer, { as: 'Ann', to: ['Kim'], content: 'only for Kim' });
      await settle();
      expect(kim.counts().looks).toBeGreaterThan(before.kim);
      expect(lee.counts().looks).toBe(before.lee);
      expect(pushed.get('Kim')!.map((n) => n.params.meta.direct)).toEqual(['true']);
      expect(pushed.get('Lee')).toEqual([]);

      // A channel message rings the common bell: both look.
      await send(writer, { as: 'Ann', channel: 'general', content: 'for everyone' });
      await settle();
      expect(lee.counts().looks).toBeGreaterThan(before.lee);
    } finally {
      for (const m of monitors) m.close();
      for (const f of [writerFeed, ...feeds]) f.close();
    }
  });
});
