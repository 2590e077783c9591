/**
 * Fewer lock cycles, never a skipped one. The wasm lock table holds a
 * WAL-index slot's release back to merge it into the record's next write
 * (LockRecord.clearLater), and refuses a checkpoint or read-mark try without
 * a handshake when a lock-table read of a moment ago already shows a live
 * holder (LockRecord.seenHeldByLive, once per read). These cases read the real lock table
 * from outside: every take is on disk before its statement goes on, no
 * release is left behind when a statement returns, and an owner is never
 * taken for alive by the shortcut unless the full judgement said so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockRecord } from '../../drivers/wasm/lock-table.js';
import { closeConnectionNumber, openConnectionNumber, selfOwner } from '../../drivers/wasm/owner-liveness.js';
import { vfsStats } from '../../drivers/wasm/vfs-stats.js';
import { currentStampMs } from '../../src/db/lock-records/owner-lease.js';
import { lockTablePath, REC, RECORD_SIZE, writeRecordHead } from '../../src/db/lock-records/portable-lock-files.js';
import { clockIsBoots, currentProcess } from '../../src/db/processes/process-identity.js';
import type { Connection } from '../../src/db/contract/driver.js';
import { tempDir, testDriver } from '../support/test-driver.js';
import { appendFileSync } from 'node:fs';

/** A pid above Linux's pid_max (2^22): no process can have it. */
const DEAD_PID = 4_194_305;
const CKPT = 1;
const WAL_WRITE = 0;

/** A WAL database with one table, and one connection to it. */
async function opened(): Promise<{ path: string; conn: Connection }> {
  const path = join(tempDir(), 'cycles.db');
  const conn = (await testDriver()).open(path, { busyTimeoutMs: 2_000 });
  conn.exec('PRAGMA journal_mode=WAL');
  conn.exec('CREATE TABLE t (x INTEGER)');
  return { path, conn };
}

/** The WAL-index slot bytes (shared 0..7, exclusive 0..7) this process's records hold on disk, as offsets. */
function slotsOnDisk(path: string): number[] {
  const table = readFileSync(lockTablePath(path));
  const held: number[] = [];
  for (let base = 0; base + RECORD_SIZE <= table.length; base += RECORD_SIZE) {
    if (table.readUInt32LE(base + REC.pid) !== process.pid) continue;
    for (let off = REC.shmShared; off < REC.shmExclusive + 8; off++) if (table[base + off] !== 0) held.push(off);
  }
  return held;
}

function counter(name: string): number {
  return vfsStats[name] ?? 0;
}

describe('wasm lock table: releases merged, refusals seen', () => {
  it('writes every take before its statement goes on and leaves no release behind when a statement returns', async () => {
    const { path, conn } = await opened();
    try {
      conn.exec('BEGIN IMMEDIATE');
      const inside = slotsOnDisk(path);
      expect(inside, 'the write lock is on disk while the transaction runs').toContain(REC.shmExclusive + WAL_WRITE);
      expect(inside.some((off) => off >= REC.shmShared && off < REC.shmExclusive), 'and a read lock').toBe(true);
      conn.prepare('INSERT INTO t VALUES (?)').run([1]);
      conn.exec('COMMIT');
      expect(slotsOnDisk(path), 'after COMMIT').toEqual([]);

      const select = conn.prepare('SELECT count(*) AS n FROM t');
      expect(select.get()).toEqual({ n: 1 });
      expect(slotsOnDisk(path), 'after get()').toEqual([]);
      expect(select.all()).toEqual([{ n: 1 }]);
      expect(slotsOnDisk(path), 'after all()').toEqual([]);
      const insert = conn.prepare('INSERT INTO t VALUES (?)');
      insert.run([2]);
      expect(slotsOnDisk(path), 'after run() in autocommit').toEqual([]);
      select.finalize();
      insert.finalize();
    } finally {
      conn.close();
    }
  });

  it('lets another connection take the write lock right after a commit, without a busy wait', async () => {
    const { path, conn } = await opened();
    const other = (await testDriver()).open(path, { busyTimeoutMs: 2_000 });
    try {
      for (let i = 0; i < 20; i++) {
        conn.exec('BEGIN IMMEDIATE');
        conn.exec('INSERT INTO t VALUES (1)');
        conn.exec('COMMIT');
        const waits = counter('busy.wait');
        other.exec('BEGIN IMMEDIATE');
        other.exec('INSERT INTO t VALUES (2)');
        other.exec('COMMIT');
        expect(counter('busy.wait'), `round ${i}`).toBe(waits);
      }
      expect(other.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 40 });
    } finally {
      other.close();
      conn.close();
    }
  });

  it('writes its record fewer times per commit than it takes locks twice over, and reads the table after every take', async () => {
    const { conn } = await opened();
    try {
      const begin = conn.prepare('BEGIN IMMEDIATE');
      const insert = conn.prepare('INSERT INTO t VALUES (?)');
      const commit = conn.prepare('COMMIT');
      for (let i = 0; i < 20; i++) (begin.run(), insert.run([i]), commit.run());
      const before = { takes: counter('lock.take'), writes: counter('lock.write'), reads: counter('lock.read') };
      const n = 100;
      for (let i = 0; i < n; i++) (begin.run(), insert.run([i]), commit.run());
      const takes = counter('lock.take') - before.takes;
      const writes = counter('lock.write') - before.writes;
      const reads = counter('lock.read') - before.reads;
      expect(takes, 'each commit takes its locks').toBeGreaterThanOrEqual(2 * n);
      expect(reads, 'every take reads the table after its write').toBeGreaterThanOrEqual(takes);
      // Unmerged, each take and each release is a write of its own: 2 per take.
      expect(writes, 'releases ride on other writes').toBeLessThan(2 * takes);
      for (const stmt of [begin, insert, commit]) stmt.finalize();
    } finally {
      conn.close();
    }
  });

  it('refuses a checkpoint try without a handshake only for a holder judged alive, and only on a read of a moment ago', async () => {
    const path = join(tempDir(), 'seen.db');
    const mine = openConnectionNumber();
    const theirs = openConnectionNumber();
    const record = LockRecord.claim(path, selfOwner(mine));
    const holder = LockRecord.claim(path, selfOwner(theirs));
    const conflicts = [REC.shmShared + CKPT, REC.shmExclusive + CKPT];
    try {
      expect(record.seenHeldByLive(conflicts, 1_000), 'before any read').toBe(false);
      holder.write(REC.shmExclusive + CKPT, 1, 1);
      expect(record.othersHoldAny(conflicts), 'the full judgement: held by a live owner').toBe(true);
      expect(record.seenHeldByLive(conflicts, 1_000), 'seen a moment ago').toBe(true);
      expect(record.seenHeldByLive(conflicts, 1_000), 'but only once per read: a retry looks again').toBe(false);
      expect(record.othersHoldAny(conflicts)).toBe(true);
      const readAt = performance.now();
      while (performance.now() - readAt < 3);
      expect(record.seenHeldByLive(conflicts, 1), 'a read older than the limit decides nothing').toBe(false);

      holder.write(REC.shmExclusive + CKPT, 1, 0);
      record.readTable();
      expect(record.seenHeldByLive(conflicts, 1_000), 'released').toBe(false);

      // A dead owner's byte: the full judgement ignores it, and the shortcut never counts it.
      const dead = Buffer.alloc(RECORD_SIZE);
      writeRecordHead(dead, 0, { pid: DEAD_PID, startTime: 1, connection: 1, realm: currentProcess().realm }, { stampMs: currentStampMs(), bootClock: clockIsBoots() });
      dead[REC.shmExclusive + CKPT] = 1;
      appendFileSync(lockTablePath(path), dead);
      expect(record.othersHoldAny(conflicts)).toBe(false);
      expect(record.seenHeldByLive(conflicts, 1_000)).toBe(false);
      expect(record.tryTake(REC.shmExclusive + CKPT, 1, conflicts), 'so the handshake takes it').toBe(true);
    } finally {
      holder.release();
      record.release();
      closeConnectionNumber(theirs);
      closeConnectionNumber(mine);
    }
  });
});
