/**
 * Rows written straight into the schema, as the bus would write them, and
 * queries reading them back: for setting up ages and states without going
 * through the bus, and for checking what it stored.
 */
import type { BusContext } from '../../src/bus/bus-context.js';
import type { Database } from '../../src/db/contract/database.js';

/**
 * Stores a message row directly, as send does: on a memory channel it is
 * revision 1 of a memory whose id is its own seq. Returns the seq.
 */
export function insertMessage(
  ctx: BusContext,
  row: { channel: string; sender: string; content: string; memory?: boolean; reply_to?: number; created_at?: number; context?: string },
): number {
  const { db } = ctx;
  return db.transaction(() => {
    // RETURNING, not lastInsertRowid: both engines have it, and PostgreSQL has no rowid.
    const seq = db.get<{ seq: number }>(
      `INSERT INTO messages (channel, sender, context, created_at, type, content, reply_to, memory_id, revision, bytes)
       VALUES (?, ?, ?, ?, 'text', ?, ?, ?, ?, ?) RETURNING seq`,
      [
        row.channel,
        row.sender,
        row.context ?? 'repo',
        row.created_at ?? ctx.clock.now(),
        row.content,
        row.reply_to ?? null,
        row.memory === true ? 0 : null,
        row.memory === true ? 1 : null,
        Buffer.byteLength(row.content),
      ],
    )!.seq;
    if (row.memory === true) db.run('UPDATE messages SET memory_id = seq WHERE seq = ?', [seq]);
    return seq;
  });
}

/** Revision rows of a memory, oldest first. */
export function revisions(ctx: BusContext, memoryId: number): { seq: number; revision: number; tombstone: number; content: string; sender: string }[] {
  return ctx.db.all('SELECT seq, revision, tombstone, content, sender FROM messages WHERE memory_id = ? ORDER BY revision', [memoryId]);
}

/** Seqs that have a vector for `model`. */
export function embeddedSeqs(ctx: BusContext, model: string): number[] {
  return ctx.db.all<{ seq: number }>('SELECT seq FROM embeddings WHERE model = ? ORDER BY seq', [model]).map((r) => r.seq);
}

export function addChannel(db: Database, name: string, kind: 'ordinary' | 'memory' = 'ordinary'): void {
  db.run('INSERT INTO channels (name, kind) VALUES (?, ?)', [name, kind]);
}

/** Inserts `count` ordinary messages created at `createdAt`; returns their seqs. */
export function addMessages(db: Database, channel: string, count: number, createdAt: number, content = (i: number) => `message ${i}`): number[] {
  const seqs: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const text = content(i);
      const r = db.get<{ seq: number }>(
        "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES (?, 'alice', 'ctx', ?, 'note', ?, ?) RETURNING seq",
        [channel, createdAt, text, Buffer.byteLength(text)],
      );
      seqs.push(r!.seq);
    }
  });
  return seqs;
}

/** Inserts one memory revision; tombstoned at `tombstoneAt` when given. Returns its seq. */
export function addRevision(
  db: Database,
  channel: string,
  memoryId: number,
  revision: number,
  createdAt: number,
  content: string,
  tombstoneAt?: number,
): number {
  return db.get<{ seq: number }>(
    `INSERT INTO messages (channel, sender, context, created_at, type, content, memory_id, revision, tombstone, tombstone_at, bytes)
     VALUES (?, 'alice', 'ctx', ?, 'memory', ?, ?, ?, ?, ?, ?) RETURNING seq`,
    [channel, createdAt, content, memoryId, revision, tombstoneAt === undefined ? 0 : 1, tombstoneAt ?? null, Buffer.byteLength(content)],
  )!.seq;
}

export function count(db: Database, sql: string, params: readonly (string | number)[] = []): number {
  return db.get<{ n: number }>(sql, params)?.n ?? -1;
}

/** Seqs the FTS index (not the content table) returns for a term. */
export function ftsHits(db: Database, term: string): number[] {
  return db.all<{ rowid: number }>('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid', [term]).map((r) => r.rowid);
}

/** Throws when the FTS index disagrees with the messages table. */
export function ftsIntegrity(db: Database): void {
  db.run("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
}

export function evictedBefore(db: Database, channel: string): number {
  return db.get<{ e: number }>('SELECT evicted_before_seq AS e FROM channels WHERE name = ?', [channel])?.e ?? -1;
}
