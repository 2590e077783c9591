/**
 * Two machines simulated on this one (issue 23, "Done when"): each set of
 * real `agentbus mcp` processes runs in a network namespace of its own with
 * its own HOME and data directory, and reaches PostgreSQL only over TCP
 * through its veth link (the cluster here listens on the links' host
 * addresses). Agents on both talk, receive and acknowledge, a waiting
 * receive is woken across machines; SIGKILL of every process of one machine
 * loses nothing acknowledged; the link down makes a call fail with a
 * retryable error within the call's deadline, and up again it works; a
 * server restart in the middle of traffic costs only retryable errors,
 * idempotent resends store each message once, and the listening
 * connections come back by themselves.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../scripts/pg-cluster.js';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { makeMachines, removeMachines, type Machine } from '../support/net-namespace.js';
import { tempDir } from '../support/test-driver.js';
import { TEST_PASSWORD } from './global-setup.js';

/** The postgres driver's bound on one call (open-postgres.ts: busy timeout 5 s + 10 s). */
const CALL_DEADLINE_MS = 15_000;

const made: Machine[] = [];
let cluster: Cluster | undefined;
let databases = 0;

interface Agent {
  call(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  readonly pid: number;
  readonly client: Client;
}

/** One machine's agents: processes in `machine`'s namespace, one HOME and data directory for all of them. */
interface MachineAgents {
  start(): Promise<Agent>;
  /** SIGKILLs every process started on this machine and waits until they are gone. */
  killAll(): Promise<void>;
}

const running: Agent[] = [];
afterEach(async () => {
  for (const agent of running.splice(0)) await agent.client.close().catch(() => undefined);
});

beforeAll(async () => {
  try {
    makeMachines(2, made);
    cluster = await startCluster({ password: TEST_PASSWORD, fsync: false, hosts: made.map((m) => ({ address: m.hostAddress, cidr: m.cidr })) });
  } catch (error) {
    removeMachines(made);
    throw error;
  }
}, 60_000);

afterAll(() => {
  try {
    cluster?.stop();
  } finally {
    removeMachines(made);
  }
});

/** A fresh database on the cluster; its URL as `machine` reaches it (the host side of its link). */
function freshDatabase(): (machine: Machine) => string {
  const name = `two_machines_${process.pid}_${++databases}`;
  cluster!.psql(`CREATE DATABASE ${name}`);
  return (machine) => `postgres://agentbus:${encodeURIComponent(TEST_PASSWORD)}@${machine.hostAddress}:${cluster!.port}/${name}`;
}

function onMachine(machine: Machine, url: string): MachineAgents {
  const home = tempDir();
  const data = join(home, 'data');
  mkdirSync(data);
  const mine: { agent: Agent }[] = [];
  return {
    async start() {
      const [command, ...prefix] = machine.exec;
      const transport = new StdioClientTransport({
        command: command!,
        args: [...prefix, process.execPath, AGENTBUS_BIN, 'mcp'],
        env: { ...getDefaultEnvironment(), HOME: home, AGENTBUS_DATA_DIR: data, AGENTBUS_DATABASE_URL: url },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'agentbus-test', version: '0' });
      await client.connect(transport);
      const call = async (name: string, args: Record<string, unknown> = {}) =>
        ((await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })).structuredContent ?? {}) as Record<string, unknown>;
      const agent = { call, pid: transport.pid!, client };
      mine.push({ agent });
      running.push(agent);
      return agent;
    },
    async killAll() {
      await Promise.all(
        mine.splice(0).map(({ agent }) => {
          // The client's own hook: the transport's is the client's, which fails the calls still waiting.
          const closed = new Promise<void>((resolve) => (agent.client.onclose = () => resolve()));
          process.kill(agent.pid, 'SIGKILL');
          return closed;
        }),
      );
    },
  };
}

type Msg = { seq: number; content: string; sender: string };
const messages = (answer: Record<string, unknown>): Msg[] => (answer.messages as Msg[] | undefined) ?? [];

describe('two machines on one PostgreSQL, each in its own network namespace', () => {
  it('agents on both machines talk, receive and acknowledge; a waiting receive is woken from the other machine; each reaches the server over its link', async () => {
    const url = freshDatabase();
    const [a, b] = [onMachine(made[0]!, url(made[0]!)), onMachine(made[1]!, url(made[1]!))];
    const alice = await a.start();
    const bob = await b.start();
    expect(await alice.call('register', { name: 'Alice' })).toMatchObject({ display_name: 'Alice' });
    expect(await bob.call('register', { name: 'Bob' })).toMatchObject({ display_name: 'Bob' });
    await bob.call('subscribe', { as: 'Bob', channel: 'general' });
    await alice.call('subscribe', { as: 'Alice', channel: 'general' });

    const waiting = bob.call('receive', { as: 'Bob', wait_seconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    const asked = performance.now();
    const sent = await alice.call('send', { as: 'Alice', channel: 'general', content: 'from machine A' });
    const got = await waiting;
    // Far inside the 30 s wait: woken by the notification (or at worst the 250 ms poll), not at the end.
    expect(performance.now() - asked).toBeLessThan(2_000);
    expect(messages(got).map((m) => [m.seq, m.content])).toEqual([[sent.seq, 'from machine A']]);
    expect(await bob.call('receive', { as: 'Bob', wait_seconds: 0, ack: got.batch_token })).toMatchObject({ messages: [], batch_token: null });

    const reply = await bob.call('send', { as: 'Bob', to: ['Alice'], content: 'from machine B, for Alice' });
    const atAlice = await alice.call('receive', { as: 'Alice', wait_seconds: 10 });
    expect(messages(atAlice).map((m) => [m.seq, m.sender, m.content])).toEqual([[reply.seq, 'Bob', 'from machine B, for Alice']]);
    await alice.call('receive', { as: 'Alice', wait_seconds: 0, ack: atAlice.batch_token });

    const clients = cluster!.psql(`SELECT DISTINCT host(client_addr) FROM pg_stat_activity WHERE application_name LIKE 'agentbus%' AND datname LIKE 'two_machines_${process.pid}_%'`);
    expect(clients.trim().split('\n').sort()).toEqual([made[0]!.nsAddress, made[1]!.nsAddress].sort());
  }, 120_000);

  it('SIGKILL of every process of one machine loses nothing acknowledged', async () => {
    const url = freshDatabase();
    const [a, b] = [onMachine(made[0]!, url(made[0]!)), onMachine(made[1]!, url(made[1]!))];
    const alice = await a.start();
    const bob = await b.start();
    const dave = await b.start();
    await alice.call('register', { name: 'Alice' });
    await bob.call('register', { name: 'Bob' });
    await dave.call('register', { name: 'Dave' });
    await bob.call('subscribe', { as: 'Bob', channel: 'general' });
    const early: number[] = [];
    for (let i = 0; i < 3; i++) early.push((await alice.call('send', { as: 'Alice', channel: 'general', content: `early ${i}` })).seq as number);
    const first = await bob.call('receive', { as: 'Bob', wait_seconds: 5 });
    expect(messages(first).map((m) => m.seq)).toEqual(early);
    await bob.call('receive', { as: 'Bob', wait_seconds: 0, ack: first.batch_token });
    const late = (await alice.call('send', { as: 'Alice', channel: 'general', content: 'late' })).seq as number;
    expect(messages(await bob.call('receive', { as: 'Bob', wait_seconds: 5 })).map((m) => m.seq)).toEqual([late]);
    // Sends from machine B that were answered: acknowledged, so they must survive; more in flight when it dies.
    const answered: number[] = [];
    for (let i = 0; i < 3; i++) answered.push((await dave.call('send', { as: 'Dave', channel: 'general', content: `dave ${i}` })).seq as number);
    const inFlight = [0, 1, 2].map((i) => dave.call('send', { as: 'Dave', channel: 'general', content: `in flight ${i}` }).catch(() => undefined));
    await b.killAll();
    await Promise.all(inFlight);

    const history = await alice.call('history', { as: 'Alice', channel: 'general', count: 100 });
    expect(history.error).toBeUndefined();
    const seen = messages(history).map((m) => m.seq);
    for (const seq of [...early, late, ...answered]) expect(seen).toContain(seq);
    // Machine B again: Bob's acknowledged batch stays acknowledged, the one he never acknowledged comes again.
    const bobAgain = await b.start();
    expect(await bobAgain.call('register', { name: 'Bob' })).toMatchObject({ display_name: 'Bob' });
    const again = await bobAgain.call('receive', { as: 'Bob', wait_seconds: 5 });
    expect(messages(again)[0]?.seq).toBe(late);
    for (const seq of early) expect(messages(again).map((m) => m.seq)).not.toContain(seq);
  }, 120_000);

  it("the machine's link down: a call fails with a retryable storage error within its deadline, never a hang; up again, it works", async () => {
    const url = freshDatabase();
    const b = onMachine(made[1]!, url(made[1]!));
    const bob = await b.start();
    await bob.call('register', { name: 'Bob' });
    made[1]!.link('down');
    try {
      const started = performance.now();
      const answer = await bob.call('discover', { as: 'Bob' });
      const took = performance.now() - started;
      expect(answer.error).toMatchObject({ code: 'storage_unavailable', retryable: true });
      expect(took).toBeLessThan(CALL_DEADLINE_MS + 5_000);
    } finally {
      made[1]!.link('up');
    }
    const back = await bob.call('discover', { as: 'Bob' });
    expect(back.error).toBeUndefined();
    expect((back.sessions as { display_name: string }[]).map((s) => s.display_name)).toContain('Bob');
  }, 120_000);

  it('a PostgreSQL restart in the middle of traffic: only retryable errors, the servers reconnect by themselves, idempotent resends do not duplicate, nothing acknowledged is lost', async () => {
    const url = freshDatabase();
    const [a, b] = [onMachine(made[0]!, url(made[0]!)), onMachine(made[1]!, url(made[1]!))];
    const alice = await a.start();
    const bob = await b.start();
    await alice.call('register', { name: 'Alice' });
    await bob.call('register', { name: 'Bob' });
    await bob.call('subscribe', { as: 'Bob', channel: 'general' });
    const before = await alice.call('send', { as: 'Alice', channel: 'general', content: 'before the restart' });
    const delivered = await bob.call('receive', { as: 'Bob', wait_seconds: 5 });
    expect(messages(delivered).map((m) => m.seq)).toEqual([before.seq]);
    await bob.call('receive', { as: 'Bob', wait_seconds: 0, ack: delivered.batch_token });

    const COUNT = 15;
    const retried: string[] = [];
    /** Sends COUNT messages with idempotency keys, each resent with its key after a retryable error until it is answered. */
    const traffic = async (agent: Agent, as: string): Promise<Map<string, number>> => {
      const seqs = new Map<string, number>();
      for (let i = 0; i < COUNT; i++) {
        const key = `${as}-${i}`;
        for (let attempt = 0; ; attempt++) {
          const answer = await agent.call('send', { as, channel: 'general', content: key, idempotency_key: key });
          if (answer.error === undefined) {
            seqs.set(key, answer.seq as number);
            break;
          }
          expect(answer.error, `${key}, attempt ${attempt}`).toMatchObject({ code: 'storage_unavailable', retryable: true });
          retried.push(key);
          if (attempt > 60) throw new Error(`${key} still failing after the restart: ${JSON.stringify(answer.error)}`);
          await new Promise((r) => setTimeout(r, 250));
        }
        await new Promise((r) => setTimeout(r, 30));
      }
      return seqs;
    };
    const running = Promise.all([traffic(alice, 'Alice'), traffic(bob, 'Bob')] as const);
    await new Promise((r) => setTimeout(r, 200));
    // Down for 2 s while both keep sending (the calls in that time meet the outage), then up again.
    cluster!.stopServer();
    await new Promise((r) => setTimeout(r, 2_000));
    cluster!.startServer();
    const [fromAlice, fromBob] = await running;
    expect(retried.length, 'calls that met the outage').toBeGreaterThan(0);

    const history = await alice.call('history', { as: 'Alice', channel: 'general', count: 100 });
    expect(history.error).toBeUndefined();
    const contents = messages(history).map((m) => m.content);
    expect(contents.filter((c) => c === 'before the restart')).toHaveLength(1);
    for (const [key, seq] of [...fromAlice, ...fromBob]) {
      expect(contents.filter((c) => c === key), `${key} stored once`).toHaveLength(1);
      expect(messages(history).find((m) => m.content === key)?.seq).toBe(seq);
    }
    // Bob's acknowledged message stays acknowledged; everything sent since comes, once.
    const after = await bob.call('receive', { as: 'Bob', wait_seconds: 5, count: 100 });
    const got = messages(after).map((m) => m.content);
    expect(got).not.toContain('before the restart');
    expect(got.sort()).toEqual([...fromAlice.keys()].sort());
    await bob.call('receive', { as: 'Bob', wait_seconds: 0, ack: after.batch_token });

    // Both servers' listening connections came back by themselves, and a send wakes the other machine again.
    const database = new URL(url(made[0]!)).pathname.slice(1);
    const listening = (): number =>
      Number(cluster!.psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'agentbus-listen' AND query LIKE 'LISTEN%'`).trim());
    const until = Date.now() + 20_000;
    while (listening() < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(listening()).toBe(2);
    const waiting = bob.call('receive', { as: 'Bob', wait_seconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    const asked = performance.now();
    const last = await alice.call('send', { as: 'Alice', channel: 'general', content: 'after the restart' });
    expect(messages(await waiting).map((m) => m.seq)).toEqual([last.seq]);
    expect(performance.now() - asked).toBeLessThan(2_000);
  }, 180_000);
});
