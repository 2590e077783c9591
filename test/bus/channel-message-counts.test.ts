/**
 * The per-channel live message counters (migration 0011) that status and the
 * console read instead of counting rows: right after every kind of write that
 * adds, tombstones or removes a message. Filled from the rows a file already
 * held when the migration runs: channel-message-counts-migration.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteMemory, editMemory } from '../../src/bus/memories.js';
import { send } from '../../src/bus/send.js';
import { channelCounts } from '../../src/bus/status-report.js';
import type { Database } from '../../src/db/contract/database.js';
import { evictMessages } from '../../src/maintenance/evict-messages.js';
import { resetDatabase } from '../../src/maintenance/reset.js';
import { purgeTombstones } from '../../src/maintenance/tombstones.js';
import { busFixture, channel, registerAs, type Fixture } from '../support/bus.js';

let fx: Fixture;
let sam: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam');
  channel(fx.ctx, sam, 'notes', 'memory');
  channel(fx.ctx, sam, 'chat', 'ordinary');
});

afterEach(async () => {
  await fx.close();
});

/** What counting the rows says, per channel. */
function counted(db: Database): Record<string, number> {
  const out: Record<string, number> = {};
  // Status leaves out the reserved channel of direct messages (sql/0012).
  for (const c of db.all<{ name: string }>("SELECT name FROM channels WHERE name <> '@direct'")) {
    out[c.name] = db.get<{ n: number }>('SELECT count(*) AS n FROM messages WHERE channel = ? AND tombstone = 0', [c.name])?.n ?? 0;
  }
  return out;
}

const kept = (db: Database) => Object.fromEntries(channelCounts(db).map((c) => [c.name, c.messages]));

describe('channel message counters', () => {
  it('follow sends, memory edits and deletes, eviction, tombstone purge and reset', async () => {
    const db = fx.ctx.db;
    const chat: number[] = [];
    for (let i = 0; i < 5; i++) chat.push((await send(fx.ctx, { as: sam, channel: 'chat', content: `hello ${i}` })).seq);
    const memory = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'a fact' })).seq;
    await send(fx.ctx, { as: sam, channel: 'notes', content: 'another fact' });
    expect(kept(db)).toEqual({ ...counted(db), chat: 5, notes: 2 });
    await editMemory(fx.ctx, { as: sam, memory_id: memory, content: 'a better fact' });
    expect(kept(db)).toEqual({ ...counted(db), notes: 2 });
    await deleteMemory(fx.ctx, { as: sam, memory_id: memory });
    expect(kept(db)).toEqual({ ...counted(db), notes: 1 });
    db.transaction(() => evictMessages(db, chat.slice(0, 2).map((seq) => ({ seq, channel: 'chat' }))));
    expect(kept(db)).toEqual({ ...counted(db), chat: 3 });
    fx.clock.advance(1000 * 3_600_000);
    db.transaction(() => purgeTombstones(db, fx.clock.now(), 1, 1000));
    expect(db.get<{ n: number }>('SELECT count(*) AS n FROM messages WHERE tombstone = 1')?.n).toBe(0);
    expect(kept(db)).toEqual(counted(db));
    resetDatabase(db);
    expect(kept(db)).toEqual({ general: 0, memory: 0 });
  });
});
