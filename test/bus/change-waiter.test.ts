import { describe, expect, it } from 'vitest';
import { createChangeWaiter, createPollingWaiter, type ChangeWaiter } from '../../src/bus/change-waiter.js';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { createBus } from './bus-fixture.js';

// Waits here use a poll and deadline far beyond the test timeout, so only the event under test can end them.
const FAR = 10 * 60_000;

describe('change waiter', () => {
  it('wakes when another connection commits', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    const waiter = createChangeWaiter(bus.dir, FAR);
    try {
      const waiting = waiter.waitForChange(Date.now() + FAR);
      setTimeout(() => register(b, { name: 'Kim' }), 20);
      await waiting;
      expect(a.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 });
    } finally {
      waiter.close();
    }
  });

  it('resolves when the signal aborts, for the watching and the polling waiter', async () => {
    const bus = await createBus();
    for (const waiter of [createChangeWaiter(bus.dir, FAR), createPollingWaiter(FAR)]) {
      const controller = new AbortController();
      const waiting = waiter.waitForChange(Date.now() + FAR, controller.signal);
      setTimeout(() => controller.abort(), 10);
      await waiting;
      expect(controller.signal.aborted).toBe(true);
      // An already aborted signal resolves at once.
      await waiter.waitForChange(Date.now() + FAR, controller.signal);
      waiter.close();
    }
  });

  it('still wakes by the poll after close, and close is idempotent', async () => {
    const bus = await createBus();
    const waiter = createChangeWaiter(bus.dir, 5);
    waiter.close();
    waiter.close();
    await expect(waiter.waitForChange(Date.now() + FAR)).resolves.toBeUndefined();
    await expect(waiter.waitForChange(Date.now() - 1)).resolves.toBeUndefined();
  });

  it('an idle long-poll looks at the database about once per poll, not in a loop on its own writes', async () => {
    const bus = await createBus({ receive_max_wait_seconds: 5 });
    const a = await bus.process('A');
    register(a, { name: 'Sam' });
    createChannel(a, { as: 'Sam', name: 'general' });
    subscribe(a, { as: 'Sam', channel: 'general' });
    const inner = createChangeWaiter(bus.dir);
    let waits = 0;
    const counting: ChangeWaiter = {
      waitForChange: (until, signal) => {
        waits++;
        return inner.waitForChange(until, signal);
      },
      close: () => inner.close(),
    };
    try {
      const result = await receive(a, { as: 'Sam', wait_seconds: 1 }, { waiter: counting });
      expect(result.messages).toEqual([]);
      // Four polls in a second, plus a wake for the receive's own first commit; a loop would be hundreds.
      expect(waits).toBeLessThan(20);
    } finally {
      counting.close();
    }
  });
});
