/**
 * Wake-ups across machines on PostgreSQL (docs/architecture.md, "Wake-ups
 * across machines"): a sender in another process with a data directory of
 * its own (another "machine") commits; the NOTIFY its transaction carries
 * wakes the waiter here through the connection's wake source. The waiters
 * here poll once a minute, so a wake within a second is a notification,
 * never the poll. A killed listening connection comes back by itself; a
 * commit whose notification was missed is still received.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChangeWaiter, type ChangeFeed } from '../../src/bus/change-waiter.js';
import { subscribe } from '../../src/bus/channels.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { Database } from '../../src/db/contract/database.js';
import { openPostgresDatabase } from '../../src/db/open/open-postgres.js';
import { createMemoryLogger } from '../../src/log.js';
import { fixturePath } from '../support/child-process.js';
import { tempDir } from '../support/test-driver.js';
import { closeAfterTest, connectPg, freshDatabase } from './pg-test.js';

/** The waiters' poll here: far longer than any wake the tests accept. */
const MINUTE = 60_000;
/** What a wake by notification must beat (the poll is a minute). */
const WOKEN_WITHIN_MS = 1_000;

const children: ChildProcessWithoutNullStreams[] = [];
const feeds: ChangeFeed[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const f of feeds.splice(0)) f.close();
});

interface Sender {
  /** Sends one message; resolves with its seq once committed, and the time the send was asked for (its notification may arrive before the child says it sent). */
  send(message: { channel?: string; to?: string[]; content: string }): Promise<{ seq: number; at: number }>;
}

/** The other machine: a process with its own data directory, registered as `name`. */
async function otherMachine(url: string, name: string): Promise<Sender> {
  const child = spawn(process.execPath, [fixturePath('pg-send-child.js'), tempDir(), url, name], { stdio: 'pipe' });
  children.push(child);
  let out = '';
  let err = '';
  const waiting: ((line: string) => void)[] = [];
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  const nextLine = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the sender printed nothing within 30 s: ${err}`)), 30_000);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  expect(await nextLine()).toBe('ready');
  return {
    async send(message) {
      const line = nextLine();
      const at = performance.now();
      child.stdin.write(`${JSON.stringify(message)}\n`);
      const got = await line;
      expect(got).toMatch(/^sent \d+$/);
      return { seq: Number(got.slice(5)), at };
    },
  };
}

/** This machine: a context on `url` with a data directory of its own, and a waiter listening to its database's wake source. */
async function thisMachine(url: string): Promise<{ ctx: BusContext; waiter: ChangeFeed }> {
  const dir = tempDir();
  const { db } = await openPostgresDatabase({ url });
  closeAfterTest(db);
  const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dir }, homeDir: dir, cwd: dir });
  const ctx: BusContext = { db, config, clock: systemClock, log: createMemoryLogger(), owner: 'here', processIdentity: undefined, defaultContext: 'repo' };
  const waiter = createChangeWaiter(dir, MINUTE, { wakeSource: db.wakeSource });
  feeds.push(waiter);
  return { ctx, waiter };
}

/** The backend pids of the listening connections on `url`'s database, once at least `min` of them have run LISTEN. */
async function listeners(admin: Database, min = 1, notPid?: number): Promise<number[]> {
  const until = Date.now() + 15_000;
  for (;;) {
    const rows = admin.all<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'agentbus-listen' AND query LIKE 'LISTEN%'",
    );
    const pids = rows.map((r) => r.pid).filter((p) => p !== notPid);
    if (pids.length >= min) return pids;
    if (Date.now() > until) throw new Error(`no listening connection within 15 s (found ${rows.length})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves with how long after `from` the wait ended, or `undefined` if it was still waiting after `ms`. */
async function endedWithin(wait: Promise<unknown>, ms: number, from: () => number): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  const ended = wait.then(() => performance.now() - from());
  try {
    return await Promise.race([ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function setUp(): Promise<{ url: string; admin: Database; here: { ctx: BusContext; waiter: ChangeFeed } }> {
  const url = await freshDatabase();
  const here = await thisMachine(url);
  const admin = closeAfterTest(new Database(await connectPg(url)));
  register(here.ctx, { name: 'Bob' });
  register(here.ctx, { name: 'Carol' });
  subscribe(here.ctx, { as: 'Bob', channel: 'general' });
  await listeners(admin);
  return { url, admin, here };
}

describe('wake-ups across machines (LISTEN/NOTIFY)', () => {
  it('a send on the other machine wakes a waiting receive here by notification, well before any poll', async () => {
    const { url, here } = await setUp();
    const alice = await otherMachine(url, 'Alice');
    for (let round = 0; round < 3; round++) {
      const waiting = receive(here.ctx, { as: 'Bob', wait_seconds: 30 }, { waiter: here.waiter });
      await new Promise((r) => setTimeout(r, 100));
      const sent = await alice.send({ channel: 'general', content: `hello ${round}` });
      const result = await waiting;
      const after = performance.now() - sent.at;
      expect(result.messages.map((m) => [m.seq, m.content])).toEqual([[sent.seq, `hello ${round}`]]);
      expect(after).toBeLessThan(WOKEN_WITHIN_MS);
      await receive(here.ctx, { as: 'Bob', wait_seconds: 0, ack: result.batch_token });
    }
  });

  it("a direct message wakes only its addressee's waiter", async () => {
    const { url, here } = await setUp();
    const alice = await otherMachine(url, 'Alice');
    const stopCarol = new AbortController();
    here.waiter.watchName?.('Bob');
    here.waiter.watchName?.('Carol');
    const bob = here.waiter.waitForChange(MINUTE, undefined, 'Bob');
    const carol = here.waiter.waitForChange(MINUTE, stopCarol.signal, 'Carol');
    const sentAt = performance.now();
    const bobWait = endedWithin(bob, WOKEN_WITHIN_MS * 3, () => sentAt);
    const carolWait = endedWithin(carol, WOKEN_WITHIN_MS * 3, () => sentAt);
    await alice.send({ to: ['Bob'], content: 'for Bob only' });
    expect(await bobWait).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await carolWait).toBeUndefined();
    stopCarol.abort();
  });

  it('a killed listening connection reconnects by itself, and later sends wake again', async () => {
    const { url, admin, here } = await setUp();
    const alice = await otherMachine(url, 'Alice');
    const [before] = await listeners(admin);
    const killedAt = performance.now();
    // A wait through the outage: the reconnection wakes it (anything may have been missed), long before its poll.
    const through = endedWithin(here.waiter.waitForChange(MINUTE), 10_000, () => killedAt);
    expect(admin.get<{ done: number }>('SELECT pg_terminate_backend(?) AS done', [before!])?.done).toBe(1);
    expect(await through).toBeLessThan(10_000);
    const [after] = await listeners(admin, 1, before);
    expect(after).not.toBe(before);
    const waiting = receive(here.ctx, { as: 'Bob', wait_seconds: 30 }, { waiter: here.waiter });
    await new Promise((r) => setTimeout(r, 100));
    const sent = await alice.send({ channel: 'general', content: 'after the reconnection' });
    expect((await waiting).messages.map((m) => m.seq)).toEqual([sent.seq]);
    expect(performance.now() - sent.at).toBeLessThan(WOKEN_WITHIN_MS);
  });

  it('nothing is lost when notifications are missed: commits while the listener is gone are received (the poll is the floor)', async () => {
    const { url, admin, here } = await setUp();
    const alice = await otherMachine(url, 'Alice');
    // The default 250 ms poll, and no wake source at all: every notification is missed.
    const deaf = createChangeWaiter(tempDir());
    feeds.push(deaf);
    const [listener] = await listeners(admin);
    admin.get('SELECT pg_terminate_backend(?) AS done', [listener!]);
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push((await alice.send({ channel: 'general', content: `missed ${i}` })).seq);
    const got: number[] = [];
    const until = Date.now() + 10_000;
    while (got.length < seqs.length && Date.now() < until) {
      const result = await receive(here.ctx, { as: 'Bob', wait_seconds: 2 }, { waiter: deaf });
      got.push(...result.messages.map((m) => m.seq));
      if (result.batch_token !== null) await receive(here.ctx, { as: 'Bob', wait_seconds: 0, ack: result.batch_token });
    }
    expect(got).toEqual(seqs);
  });
});
