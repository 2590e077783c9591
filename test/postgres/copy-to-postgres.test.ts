/**
 * Moving a bus from its SQLite file into PostgreSQL (src/db/open/copy-to-postgres.ts,
 * the core of `agentbus convert --to postgres`): a real native SQLite bus
 * with every kind of row, copied into a fresh database on the project's
 * cluster; agents carry on there where they were, and the source file is
 * never changed.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { editMemory, getMemory } from '../../src/bus/memories.js';
import { register } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { listReservations, reserve } from '../../src/bus/reservations.js';
import { send } from '../../src/bus/send.js';
import { loadConfig } from '../../src/config.js';
import { copyToPostgres, type CopyProgress } from '../../src/db/open/copy-to-postgres.js';
import type { Database } from '../../src/db/contract/database.js';
import { DbError } from '../../src/db/contract/db-error.js';
import { openDatabase } from '../../src/db/open/open-database.js';
import { openPostgresDatabase } from '../../src/db/open/open-postgres.js';
import { createMemoryLogger } from '../../src/log.js';
import { expectErrorSync } from '../support/expect-error.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/test-driver.js';
import { closeAfterTest, freshDatabase } from './pg-test.js';

const clock = new TestClock();

function contextOver(db: Database, dir: string, owner: string): BusContext {
  const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dir }, homeDir: dir, cwd: dir });
  return { db, config, clock, log: createMemoryLogger(), owner, processIdentity: undefined, defaultContext: 'repo' };
}

/** A SQLite bus holding sessions, channels, subscriptions with a pending batch, messages, memory revisions, a direct message and a reservation. */
async function sqliteBus(): Promise<{ dir: string; db: Database; repository: string; pendingToken: string }> {
  const dir = tempDir();
  const { db } = await openDatabase({ dataDir: dir, driver: 'native' });
  closeAfterTest(db);
  const ann = contextOver(db, dir, 'owner-ann');
  const kim = contextOver(db, dir, 'owner-kim');
  register(ann, { name: 'Ann' });
  register(kim, { name: 'Kim' });
  createChannel(ann, { as: 'Ann', name: 'dev' });
  subscribe(kim, { as: 'Kim', channel: 'dev' });
  for (let i = 0; i < 12; i++) await send(ann, { as: 'Ann', channel: 'dev', content: `build step ${i} passed` });
  const memory = await send(ann, { as: 'Ann', channel: 'memory', content: 'the cache lives in /tmp' });
  await editMemory(kim, { as: 'Kim', memory_id: memory.memory_id as number, content: 'the cache lives in ~/.cache' });
  await send(ann, { as: 'Ann', to: ['Kim'], content: 'a word for Kim only' });
  // Kim takes a batch and does not acknowledge it: it must come again, with its token, after the move.
  const batch = await receive(kim, { as: 'Kim', wait_seconds: 0, count: 5 });
  const repository = tempDir();
  execFileSync('git', ['init', '-q', repository]);
  reserve(ann, { as: 'Ann', paths: ['src/a.ts'], repository });
  return { dir, db, repository, pendingToken: batch.batch_token as string };
}

const ROWS: Record<string, string> = {
  messages: 'SELECT seq, channel, sender, content, tombstone, memory_id, revision, direct_to FROM messages ORDER BY seq',
  subscriptions: 'SELECT sender, channel, cursor_seq, pending_token, pending_end_seq FROM subscriptions ORDER BY sender, channel',
  direct_recipients: 'SELECT seq, addressee, state, pending_token FROM direct_recipients ORDER BY seq, addressee',
  channels: 'SELECT name, kind, created_seq FROM channels ORDER BY name',
  known_names: 'SELECT name, first_seen FROM known_names ORDER BY name',
};

function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

describe('copying a bus into PostgreSQL', () => {
  it('copies every row with its keys; agents carry on where they were; the source file is unchanged', async () => {
    const source = await sqliteBus();
    const before = fileHash(join(source.dir, 'agentbus.db'));
    const url = await freshDatabase();
    const { db: target } = await openPostgresDatabase({ url });
    closeAfterTest(target);
    const progress: CopyProgress[] = [];
    const result = copyToPostgres(source.db, target, (p) => progress.push(p));

    for (const [table, sql] of Object.entries(ROWS)) expect({ table, rows: target.all(sql) }).toEqual({ table, rows: source.db.all(sql) });
    expect(result.tables.find((t) => t.table === 'messages')?.rows).toBe(source.db.get<{ n: number }>('SELECT count(*) AS n FROM messages')?.n);
    expect(progress.at(-1)).toMatchObject({ table: 'reservation_takeovers' });
    expect(progress.filter((p) => p.table === 'messages').at(-1)).toMatchObject({ copied: result.tables.find((t) => t.table === 'messages')?.rows });
    // What the target's triggers keep follows the copied rows.
    expect(target.get("SELECT live FROM channel_message_counts WHERE channel = 'dev'")).toEqual({ live: 12 });
    expect(target.get('SELECT total AS used FROM message_bytes')).toEqual(target.get('SELECT sum(bytes)::int8 AS used FROM messages'));
    expect(fileHash(join(source.dir, 'agentbus.db'))).toBe(before);

    const dir = tempDir();
    const kim = contextOver(target, dir, 'owner-kim');
    const ann = contextOver(target, dir, 'owner-ann');
    // The pending batch comes again with its token; acknowledged, the rest follows.
    const again = await receive(kim, { as: 'Kim', wait_seconds: 0, count: 5 });
    expect(again).toMatchObject({ redelivered: true, batch_token: source.pendingToken });
    const rest = [];
    let token: string | null = source.pendingToken;
    for (;;) {
      const r = await receive(kim, { as: 'Kim', wait_seconds: 0, count: 5, ...(token === null ? {} : { ack: token }) });
      if (r.messages.length === 0) break;
      rest.push(...r.messages.map((m) => m.content));
      token = r.batch_token;
    }
    expect(rest).toContain('a word for Kim only');
    expect(getMemory(ann, { as: 'Ann', memory_id: (target.get<{ m: number }>('SELECT min(memory_id) AS m FROM messages')?.m) as number })).toMatchObject({ content: 'the cache lives in ~/.cache', revision: 2 });
    expect(listReservations(ann, { as: 'Ann', repository: source.repository }).reservations.map((r) => r.pattern)).toEqual(['src/a.ts']);
    // No seq is handed out twice.
    const next = await send(ann, { as: 'Ann', channel: 'dev', content: 'after the move' });
    expect(next.seq).toBe(result.lastSeq + 1);
  });

  it('refuses a database that already holds a bus, and one of a schema it does not know, changing nothing', async () => {
    const source = await sqliteBus();
    const url = await freshDatabase();
    const { db: target } = await openPostgresDatabase({ url });
    closeAfterTest(target);
    copyToPostgres(source.db, target);
    const count = target.get('SELECT count(*)::int AS n FROM messages');
    expectErrorSync(() => copyToPostgres(source.db, target), DbError, 'not_empty');
    expect(target.get('SELECT count(*)::int AS n FROM messages')).toEqual(count);

    const { db: empty } = await openPostgresDatabase({ url: await freshDatabase() });
    closeAfterTest(empty);
    source.db.exec('CREATE TABLE added_by_a_later_migration (x INTEGER)');
    expectErrorSync(() => copyToPostgres(source.db, empty), DbError, 'sql');
    expect(empty.get('SELECT count(*)::int AS n FROM sessions')).toEqual({ n: 0 });
  });
});
