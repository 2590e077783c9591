/**
 * The bus's core operations on PostgreSQL, in-process over the real driver:
 * the parts whose SQL is shared by both engines or behind the dialect so
 * far (registration and discovery, channels, subscriptions, send, receive
 * with its batch token and acknowledgement, history, memories with
 * revisions). Two "processes": two connections with their own owner tokens.
 * What does not work on postgres yet is listed in docs/drivers.md.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import { listReservations, release, reserve } from '../../src/bus/reservations.js';
import { expectErrorSync } from '../support/expect-error.js';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChannel, listChannels, subscribe } from '../../src/bus/channels.js';
import { history } from '../../src/bus/history.js';
import { deleteMemory, editMemory, getMemory } from '../../src/bus/memories.js';
import { discover, heartbeat, register } from '../../src/bus/identity.js';
import { createMaintenance } from '../../src/maintenance/tick.js';
import { receive } from '../../src/bus/receive.js';
import { search } from '../../src/bus/search.js';
import { send } from '../../src/bus/send.js';
import { loadConfig } from '../../src/config.js';
import { openPostgresDatabase } from '../../src/db/open/open-postgres.js';
import { createMemoryLogger } from '../../src/log.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/test-driver.js';
import { closeAfterTest, freshDatabase } from './pg-test.js';

async function twoProcesses(): Promise<[BusContext, BusContext]> {
  const url = await freshDatabase();
  const dir = tempDir();
  const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dir }, homeDir: dir, cwd: dir });
  const clock = new TestClock();
  const contexts: BusContext[] = [];
  for (const owner of ['owner-a', 'owner-b']) {
    const { db } = await openPostgresDatabase({ url });
    closeAfterTest(db);
    contexts.push({ db, config, clock, log: createMemoryLogger(), owner, processIdentity: undefined, defaultContext: 'repo' });
  }
  return contexts as [BusContext, BusContext];
}

describe('the bus on postgres', () => {
  it('registration, discovery and channels', async () => {
    const [a, b] = await twoProcesses();
    expect(register(a, { name: 'Alice' }).display_name).toBe('Alice');
    expect(register(b, { name: 'Bob' }).display_name).toBe('Bob');
    expect(discover(b, { as: 'Bob' }).sessions.map((s) => s.display_name).sort()).toEqual(['Alice', 'Bob']);
    expect(createChannel(a, { as: 'Alice', name: 'dev' })).toMatchObject({ name: 'dev', created: true });
    expect(listChannels(b, { as: 'Bob' }).channels.map((c) => c.name)).toEqual(['dev', 'general', 'memory']);
  });

  it('send, receive with a batch token, redelivery until acknowledged, then nothing; history keeps it', async () => {
    const [a, b] = await twoProcesses();
    register(a, { name: 'Alice' });
    register(b, { name: 'Bob' });
    expect(subscribe(b, { as: 'Bob', channel: 'general' })).toMatchObject({ created: true, cursor_seq: 0 });
    const sent = await send(a, { as: 'Alice', channel: 'general', content: 'hello over postgres' });
    const first = await receive(b, { as: 'Bob', wait_seconds: 0 });
    expect(first.messages.map((m) => [m.seq, m.sender, m.content])).toEqual([[sent.seq, 'Alice', 'hello over postgres']]);
    expect(first.batch_token).not.toBeNull();
    const again = await receive(b, { as: 'Bob', wait_seconds: 0 });
    expect(again).toMatchObject({ redelivered: true, batch_token: first.batch_token });
    expect(again.messages.map((m) => m.seq)).toEqual([sent.seq]);
    const acked = await receive(b, { as: 'Bob', wait_seconds: 0, ack: first.batch_token });
    expect(acked).toMatchObject({ messages: [], batch_token: null });
    expect(history(b, { as: 'Bob', channel: 'general' }).messages.map((m) => m.content)).toEqual(['hello over postgres']);
  });

  it('seqs follow commit order across two connections, and a memory gets its memory_id and revision', async () => {
    const [a, b] = await twoProcesses();
    register(a, { name: 'Alice' });
    register(b, { name: 'Bob' });
    const seqs: number[] = [];
    for (let i = 0; i < 6; i++) seqs.push((await send(i % 2 === 0 ? a : b, { as: i % 2 === 0 ? 'Alice' : 'Bob', channel: 'general', content: `m${i}` })).seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    const memory = await send(a, { as: 'Alice', channel: 'memory', content: 'a fact' });
    expect(memory).toMatchObject({ memory_id: memory.seq, revision: 1 });
  });

  it('an idempotent resend answers the first result; the heartbeat keeps the session', async () => {
    const [a] = await twoProcesses();
    register(a, { name: 'Alice' });
    const first = await send(a, { as: 'Alice', channel: 'general', content: 'once', idempotency_key: 'k1' });
    const again = await send(a, { as: 'Alice', channel: 'general', content: 'once', idempotency_key: 'k1' });
    expect(again).toEqual(first);
    expect(history(a, { as: 'Alice', channel: 'general' }).messages).toHaveLength(1);
    expect(heartbeat(a)).toBe(1);
  });

  it('the maintenance tick takes its lease and runs its steps without error; the SQLite-only steps are not run', async () => {
    const [a] = await twoProcesses();
    const maintenance = createMaintenance({ db: a.db, config: a.config, clock: a.clock, log: a.log, owner: a.owner, processIdentity: undefined });
    const report = await maintenance.runTick();
    await maintenance.stop();
    expect(report.leased).toBe(true);
    const names = report.steps.map((s) => s.name);
    expect(names).not.toContain('fts_merge');
    expect(names).not.toContain('vacuum');
    const ported = ['stale_sessions', 'reservations', 'expired_receipts', 'idle_subscriptions', 'retention', 'tombstones', 'capacity'];
    for (const name of ported) {
      const step = report.steps.find((s) => s.name === name);
      expect(step, name).toBeDefined();
      expect(step?.error, name).toBeUndefined();
    }
  });

  it('memories: a revision replaces the live one, get answers the newest, delete tombstones it', async () => {
    const [a] = await twoProcesses();
    register(a, { name: 'Alice' });
    const { memory_id } = (await send(a, { as: 'Alice', channel: 'memory', content: 'a fact' })) as { memory_id: number };
    expect(await editMemory(a, { as: 'Alice', memory_id, content: 'a newer fact' })).toMatchObject({ memory_id, revision: 2, replaced_revision: 1 });
    expect(getMemory(a, { as: 'Alice', memory_id })).toMatchObject({ memory_id, revision: 2, content: 'a newer fact' });
    expect(await deleteMemory(a, { as: 'Alice', memory_id })).toMatchObject({ memory_id, revision: 2 });
    expect(a.db.get('SELECT count(*)::int AS live FROM messages WHERE memory_id = ? AND tombstone = 0', [memory_id])).toEqual({ live: 0 });
  });

  it('text search: every word must appear, a quoted phrase as written, a trailing * as a prefix, operators as words; threads filter', async () => {
    const [a] = await twoProcesses();
    register(a, { name: 'Alice' });
    const root = await send(a, { as: 'Alice', channel: 'general', content: 'the deploy pipeline failed on staging' });
    const reply = await send(a, { as: 'Alice', channel: 'general', content: 'staging pipeline fixed', reply_to: root.seq });
    await send(a, { as: 'Alice', channel: 'general', content: 'lunch is at noon' });
    const seqs = async (query: string, extra: Record<string, unknown> = {}) =>
      (await search(a, { as: 'Alice', query, mode: 'text', ...extra })).results.map((r) => r.seq).sort((x, y) => x - y);
    expect(await seqs('pipeline staging')).toEqual([root.seq, reply.seq]);
    expect(await seqs('"pipeline failed"')).toEqual([root.seq]);
    expect(await seqs('"failed pipeline"')).toEqual([]);
    expect(await seqs('pipe*')).toEqual([root.seq, reply.seq]);
    expect(await seqs('STAGING OR lunch')).toEqual([]);
    expect(await seqs('staging', { thread: root.seq })).toEqual([root.seq, reply.seq]);
    expect(await seqs('staging', { thread: reply.seq })).toEqual([reply.seq]);
  });

  it('file reservations: granted, an overlapping exclusive one refused as conflict, listed, released', async () => {
    const [a, b] = await twoProcesses();
    register(a, { name: 'Alice' });
    register(b, { name: 'Bob' });
    const repository = tempDir();
    execFileSync('git', ['init', '-q', repository]);
    expect(reserve(a, { as: 'Alice', paths: ['src/a.ts'], repository }).reservations.map((r) => r.pattern)).toEqual(['src/a.ts']);
    expectErrorSync(() => reserve(b, { as: 'Bob', paths: ['src/*.ts'], repository }), BusError, 'conflict');
    expect(listReservations(b, { as: 'Bob', repository }).reservations.map((r) => [r.pattern, r.display_name])).toEqual([['src/a.ts', 'Alice']]);
    expect(release(a, { as: 'Alice', paths: ['src/a.ts'], repository })).toMatchObject({ released: ['src/a.ts'], not_held: [] });
    expect(reserve(b, { as: 'Bob', paths: ['src/*.ts'], repository }).reservations.map((r) => r.pattern)).toEqual(['src/*.ts']);
  });
});
