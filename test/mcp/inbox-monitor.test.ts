/**
 * The inbox monitor in process, over a real database and a real inbox folder:
 * when the inbox file is rewritten. A tool call's look writes at once (a hook
 * runs right after the call); other changes at most once per write interval,
 * the newest content last, and not while a receive is in flight.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { send } from '../../src/bus/send.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { inboxDir, inboxFileName, type InboxFile } from '../../src/harness/inbox-file.js';
import { createInboxMonitor, type InboxMonitor } from '../../src/mcp/inbox-monitor.js';
import { createBus } from '../support/bus.js';
import { foreignProcess } from '../support/process-identities.js';

const INTERVAL_MS = 2_000;

async function setup() {
  const bus = await createBus();
  const reader = await bus.process('owner-reader');
  const writer = await bus.process('owner-writer');
  register(reader, { name: 'Kim' });
  register(writer, { name: 'Ann' });
  subscribe(reader, { as: 'Kim', channel: 'general' });
  const hints: (() => void)[] = [];
  const server = currentProcess();
  const harness = foreignProcess();
  const monitor: InboxMonitor = createInboxMonitor({
    ctx: reader,
    dataDir: bus.dir,
    feed: { onChange: (listener) => (hints.push(listener), () => undefined) },
    server,
    harness,
    pollMs: 3_600_000,
    writeIntervalMs: INTERVAL_MS,
  });
  const file = join(inboxDir(bus.dir), inboxFileName(harness, server));
  /** What the file says is unread on "general" for Kim. */
  const unread = (): number => (JSON.parse(readFileSync(file, 'utf8')) as InboxFile).names[0]!.subscriptions[0]!.unread;
  /** A commit hint, and the turn of the event loop on which the monitor looks. */
  const hint = async (): Promise<void> => {
    for (const listener of hints) listener();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { bus, writer, monitor, unread, hint };
}

describe('the inbox file', () => {
  it('is written at once after a tool call, and at most once per interval for commits nobody asked about', async () => {
    const { bus, writer, monitor, unread, hint } = await setup();
    monitor.refresh();
    expect(unread()).toBe(0);
    bus.clock.advance(INTERVAL_MS);
    await send(writer, { as: 'Ann', channel: 'general', content: 'one' });
    // The last write is an interval old: the first change is written on its hint.
    await hint();
    expect(unread()).toBe(1);
    for (const content of ['two', 'three']) {
      await send(writer, { as: 'Ann', channel: 'general', content });
      await hint();
    }
    // Within the interval: not yet.
    expect(unread()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 200));
    // The interval over: the newest content, once.
    expect(unread()).toBe(3);
    await send(writer, { as: 'Ann', channel: 'general', content: 'four' });
    await hint();
    expect(unread()).toBe(3);
    // A tool call does not wait.
    monitor.refresh();
    expect(unread()).toBe(4);
    monitor.close();
  });

  it('waits while a receive is in flight, whose answer writes it, and the write that waited brings nothing older', async () => {
    const { bus, writer, monitor, unread, hint } = await setup();
    monitor.refresh();
    bus.clock.advance(INTERVAL_MS);
    const leave = monitor.enterReceive('Kim');
    await send(writer, { as: 'Ann', channel: 'general', content: 'for the receive' });
    await hint();
    expect(unread()).toBe(0);
    leave();
    await send(writer, { as: 'Ann', channel: 'general', content: 'and one more' });
    monitor.refresh();
    expect(unread()).toBe(2);
    // The deferred write was superseded: nothing older lands later.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS + 200));
    expect(unread()).toBe(2);
    monitor.close();
  });
});
