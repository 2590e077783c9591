import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BELL_FILE, bellKeys, bellPath, createChangeWaiter, createPollingWaiter, POLL_INTERVAL_MS, ringBell, type ChangeFeed, type ChangeWaiter } from '../../src/bus/change-waiter.js';
import { wakeAtCommit } from '../../src/bus/commit-wake.js';
import type { Database } from '../../src/db/contract/database.js';
import type { WakeSource } from '../../src/db/contract/driver.js';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { systemClock } from '../../src/clock.js';
import { fixturePath } from '../support/child-process.js';
import { testDriverEnv, testDriverName } from '../support/test-driver.js';
import { createBus } from '../support/bus.js';
import { endWakeListeners, wakeSourcesListening } from '../support/wake-listeners.js';

// Waits here use a poll and a longest wait far beyond the test timeout, so only the event under test can end them.
const FAR = 10 * 60_000;

/**
 * The waiter of a process on `db`, as `agentbus mcp` makes it: on a
 * 'bell-file' engine it watches the bells of `dir`, on a 'notify' one it
 * follows the connection's wake source; resolves once that hears commits.
 */
async function waiterOn(dir: string, db: Database, pollMs = FAR, options: { everyDirect?: boolean } = {}): Promise<ChangeFeed> {
  const waiter = createChangeWaiter(dir, pollMs, { ...options, wakeSource: db.wakeSource });
  await wakeSourcesListening(db, 1);
  return waiter;
}

/** Rings a commit's bells as `db`'s engine does (commit-wake.ts): the bell files of `dir` touched after it, or their keys NOTIFYed at commit. */
function ring(dir: string, db: Database, addressees?: readonly string[]): void {
  if (db.capabilities.wakeups === 'bell-file') {
    expect(ringBell(dir, addressees)).toBe(true);
    return;
  }
  db.transaction(() => wakeAtCommit(db, addressees));
}

/** Rings the bells on `db` and checks, 100 ms later, that a listener that left heard nothing more. */
async function expectDeafAfterRing(dir: string, db: Database, heard: () => number): Promise<void> {
  const before = heard();
  ring(dir, db);
  await new Promise((r) => setTimeout(r, 100));
  expect(heard()).toBe(before);
}

describe('change waiter', () => {
  it('wakes on the bell rung after another connection commits, and not on a commit that rings none (writing the database files, or no NOTIFY)', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    const waiter = await waiterOn(bus.dir, a.db);
    try {
      let woken = false;
      const waiting = waiter.waitForChange(FAR).then(() => (woken = true));
      // A commit that does not ring (a registration): -wal, -shm and the wasm lock table change; a server's commit sends no NOTIFY.
      register(b, { name: 'Kim' });
      register(b, { name: 'Lee' });
      await new Promise((r) => setTimeout(r, 300));
      expect(woken, 'woken by a commit that rang no bell').toBe(false);
      ring(bus.dir, b.db);
      await waiting;
      expect(a.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 2 });
    } finally {
      waiter.close();
    }
  });

  it('keeps hearing the bells when their way is lost: the bell file removed or replaced, or the listening connection ended', async () => {
    const bus = await createBus();
    const a = await bus.process('A');
    const waiter = await waiterOn(bus.dir, a.db);
    const bell = join(bus.dir, BELL_FILE);
    try {
      if (a.db.capabilities.wakeups === 'notify') {
        expect(existsSync(bell), 'a waiter on a wake source makes no bell file').toBe(false);
        // The reconnection rings every bell (anything may have been missed), then rings are heard again.
        const lost = waiter.waitForChange(FAR);
        expect(endWakeListeners(a.db)).toBe(1);
        await lost;
        await wakeSourcesListening(a.db, 1);
        const again = waiter.waitForChange(FAR);
        setTimeout(() => ring(bus.dir, a.db), 20);
        await again;
        return;
      }
      expect(existsSync(bell), 'the waiter creates the bell it watches').toBe(true);
      rmSync(bell);
      await new Promise((r) => setTimeout(r, 100));
      const afterRemoval = waiter.waitForChange(FAR);
      setTimeout(() => ringBell(bus.dir), 20);
      await afterRemoval;
      writeFileSync(`${bell}.new`, '');
      renameSync(`${bell}.new`, bell);
      await new Promise((r) => setTimeout(r, 100));
      const afterReplace = waiter.waitForChange(FAR);
      setTimeout(() => ringBell(bus.dir), 20);
      await afterReplace;
    } finally {
      waiter.close();
    }
  });

  it('resolves when the signal aborts, for the watching and the polling waiter', async () => {
    const bus = await createBus();
    for (const waiter of [createChangeWaiter(bus.dir, FAR), createPollingWaiter(FAR)]) {
      const controller = new AbortController();
      const waiting = waiter.waitForChange(FAR, controller.signal);
      setTimeout(() => controller.abort(), 10);
      await waiting;
      expect(controller.signal.aborted).toBe(true);
      // An already aborted signal resolves at once.
      await waiter.waitForChange(FAR, controller.signal);
      waiter.close();
    }
  });

  it('still wakes by the poll after close, and close is idempotent', async () => {
    const bus = await createBus();
    const waiter = createChangeWaiter(bus.dir, 5);
    waiter.close();
    waiter.close();
    await expect(waiter.waitForChange(FAR)).resolves.toBeUndefined();
    await expect(waiter.waitForChange(0)).resolves.toBeUndefined();
  });

  it('an idle long-poll looks at the database about once per poll, not in a loop on its own writes', async () => {
    const bus = await createBus({ receive_max_wait_seconds: 5 });
    const a = await bus.process('A');
    register(a, { name: 'Sam' });
    createChannel(a, { as: 'Sam', name: 'general' });
    subscribe(a, { as: 'Sam', channel: 'general' });
    const inner = await waiterOn(bus.dir, a.db, POLL_INTERVAL_MS);
    let waits = 0;
    const counting: ChangeWaiter = {
      waitForChange: (maxMs, signal) => {
        waits++;
        return inner.waitForChange(maxMs, signal);
      },
      close: () => inner.close(),
    };
    try {
      // The system clock: this wait must really end after a second.
      const result = await receive({ ...a, clock: systemClock }, { as: 'Sam', wait_seconds: 1 }, { waiter: counting });
      expect(result.messages).toEqual([]);
      // Four polls in a second, plus a wake for the receive's own first commit; a loop would be hundreds.
      expect(waits).toBeLessThan(20);
    } finally {
      counting.close();
    }
  });

  it('wakes on the bell another process rings, and feeds listeners until they leave', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    const waiter = await waiterOn(bus.dir, a.db);
    let heard = 0;
    const leave = waiter.onChange(() => heard++);
    try {
      const waiting = waiter.waitForChange(FAR);
      // On a bell-file engine the bell file does not exist yet: ringing creates it, and that too is heard.
      setTimeout(() => ring(bus.dir, b.db), 20);
      await waiting;
      expect(heard).toBeGreaterThan(0);
      // announce is how a bell-file process rings after its commit; a 'notify' commit rings by itself.
      const again = waiter.waitForChange(FAR);
      setTimeout(() => (b.db.capabilities.wakeups === 'bell-file' ? waiter.announce() : ring(bus.dir, b.db)), 20);
      await again;
      leave();
      await expectDeafAfterRing(bus.dir, b.db, () => heard);
    } finally {
      waiter.close();
    }
    expect(BELL_FILE).toBe('agentbus.bell');
  });

  it('one function registered as a listener twice, plainly and for a name bell, keeps hearing the common bell after the name registration leaves', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    const waiter = await waiterOn(bus.dir, a.db);
    let heard = 0;
    const listener = (): void => void heard++;
    const leavePlain = waiter.onChange(listener);
    const leaveName = waiter.onChange(listener, { name: 'Kim' });
    try {
      leaveName();
      const waiting = waiter.waitForChange(FAR);
      setTimeout(() => ring(bus.dir, b.db), 20);
      await waiting;
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toBeGreaterThan(0);
      leavePlain();
      await expectDeafAfterRing(bus.dir, b.db, () => heard);
    } finally {
      waiter.close();
    }
  });

  it('a direct message rings only its addressees\' bells and the direct bell: a wait as another name, or on no name, sleeps on', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    const waiter = await waiterOn(bus.dir, a.db);
    const reader = await waiterOn(bus.dir, a.db, FAR, { everyDirect: true });
    const woken: string[] = [];
    const bystander = new AbortController();
    const plain = new AbortController();
    try {
      waiter.watchName?.('Bob');
      const bob = waiter.waitForChange(FAR, undefined, 'Bob').then(() => woken.push('Bob'));
      const eve = waiter.waitForChange(FAR, bystander.signal, 'Eve').then(() => woken.push(bystander.signal.aborted ? 'Eve aborted' : 'Eve'));
      const none = waiter.waitForChange(FAR, plain.signal).then(() => woken.push(plain.signal.aborted ? 'plain aborted' : 'plain'));
      const all = reader.waitForChange(FAR).then(() => woken.push('reader'));
      await new Promise((r) => setTimeout(r, 20));
      ring(bus.dir, b.db, ['Bob']);
      await Promise.all([bob, all]);
      await new Promise((r) => setTimeout(r, 100));
      expect(woken.sort()).toEqual(['Bob', 'reader']);
      bystander.abort();
      plain.abort();
      await Promise.all([eve, none]);
      expect(woken.sort()).toEqual(['Bob', 'Eve aborted', 'plain aborted', 'reader']);
    } finally {
      waiter.close();
      reader.close();
    }
  });

  it('every message another process commits and announces wakes a waiting receive, with no help from the poll', async () => {
    // A watch of the WAL fires while the writer is still writing frames, before the commit is
    // visible; a reader woken by it could look too early and sleep until the poll. The bell
    // rings after the commit (a NOTIFY is delivered at it), so with a poll far beyond the test,
    // every wake must find its message.
    const bus = await createBus({ receive_max_wait_seconds: 60 });
    // The system clock throughout: a missed wake must end at the receive's deadline, not hang the
    // test, and a subscription made on the test clock's fixed date would read as expired by now.
    const b = { ...(await bus.process('B')), clock: systemClock };
    register(b, { name: 'Kim' });
    subscribe(b, { as: 'Kim', channel: 'general' });
    const child = spawn(process.execPath, [fixturePath('send-child.js'), bus.dir, 'Ann', 'general', 'bell'], {
      env: { ...process.env, AGENTBUS_DRIVER: testDriverName(), ...testDriverEnv(bus.dir) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const inner = await waiterOn(bus.dir, b.db);
    // A wait that lasts its whole duration was not woken by the commit (a missed wake the deadline caught).
    let endedAtDeadline = 0;
    const waiter: ChangeWaiter = {
      waitForChange: async (maxMs, signal) => {
        const started = performance.now();
        await inner.waitForChange(maxMs, signal);
        if (performance.now() - started >= maxMs) endedAtDeadline++;
      },
      close: () => inner.close(),
    };
    try {
      while (!stdout.includes('ready\n')) {
        if (child.exitCode !== null) throw new Error(`sender exited: ${stderr}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      let token: string | null = null;
      for (let i = 0; i < 40; i++) {
        const waiting = receive(b, { as: 'Kim', wait_seconds: 5, ...(token === null ? {} : { ack: token }) }, { waiter });
        child.stdin.write(`m${i}\n`);
        const result = await waiting;
        expect(result.messages.map((m) => m.content)).toEqual([`m${i}`]);
        token = result.batch_token;
      }
      expect(endedAtDeadline).toBe(0);
    } finally {
      waiter.close();
      child.stdin.end();
      child.kill();
    }
  });

  it("hears a 'notify' engine's wake source as its bells, watching no bell file meanwhile: the common key, a name's key only for that name, `*` for all; listenTo(undefined) stops; only 'notify' connections have one", async () => {
    const bus = await createBus();
    const a = await bus.process('A');
    expect(a.db.wakeSource !== undefined).toBe(a.db.capabilities.wakeups === 'notify');
    const subscribers = new Set<(payload: string) => void>();
    const source: WakeSource = {
      subscribe(listener) {
        subscribers.add(listener);
        return () => subscribers.delete(listener);
      },
    };
    const deliver = (payload: string): void => [...subscribers].forEach((s) => s(payload));
    const waiter = createChangeWaiter(bus.dir, FAR, { wakeSource: source });
    try {
      const ended = (name?: string): { done: boolean; stop: AbortController } => {
        const stop = new AbortController();
        const state = { done: false, stop };
        void waiter.waitForChange(FAR, stop.signal, name).then(() => (state.done = true));
        return state;
      };
      const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));
      const [plain, bob, carol] = [ended(), ended('Bob'), ended('Carol')];
      expect([bellPath(bus.dir, undefined), bellPath(bus.dir, { name: 'Bob' })].filter(existsSync), 'bell files made by a waiter on a wake source').toEqual([]);
      deliver(bellKeys(['Bob']).join(' '));
      await settle();
      expect([plain.done, bob.done, carol.done]).toEqual([false, true, false]);
      deliver(bellKeys(undefined).join(' '));
      await settle();
      expect([plain.done, carol.done]).toEqual([true, true]);
      const [p2, b2] = [ended(), ended('Bob')];
      deliver('*');
      await settle();
      expect([p2.done, b2.done]).toEqual([true, true]);
      waiter.listenTo(undefined);
      expect(subscribers.size).toBe(0);
      const deaf = ended();
      deliver('*');
      await settle();
      expect(deaf.done).toBe(false);
      // Without a source the bells are files again: the waiter watches (and so makes) the common one.
      expect(existsSync(bellPath(bus.dir, undefined))).toBe(true);
      deaf.stop.abort();
      // Closed, it follows nothing again.
      waiter.close();
      waiter.listenTo(source);
      expect(subscribers.size).toBe(0);
    } finally {
      waiter.close();
    }
  });
});
