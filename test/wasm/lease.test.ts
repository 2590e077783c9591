/**
 * The wasm driver's lock table with owners it cannot judge by pid, written
 * into a real `<db>-locks` file as another process would have left them:
 * another pid namespace's owner (judged by its lease stamp), and a record of
 * an older agentbus that carries no realm at all.
 */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DbError } from '../../src/db/contract/db-error.js';
import { currentStampMs, LEASE_EXPIRY_MS } from '../../src/db/lock-records/owner-lease.js';
import { isRevoked, lockTablePath, readRecordHead, REC, RECORD_SIZE, writeRecordHead, type LockOwner } from '../../src/db/lock-records/portable-lock-files.js';
import { clockIsBoots, currentProcess } from '../../src/db/processes/process-identity.js';
import { expectError } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';
import { createDatabase, driver, startChild, waitAll } from './stress-harness.js';

/** A pid above Linux's pid_max (2^22): no process can have it. */
const DEAD_PID = 4_194_305;

function otherNamespace(pid: number): LockOwner {
  const me = currentProcess().realm;
  if (me === undefined) throw new Error('this test needs /proc (Linux)');
  return { pid, startTime: 777, connection: 1, realm: { boot: me.boot, pidNamespace: me.pidNamespace + 1 } };
}

/** A database with one table, closed (no lock table left). */
async function database(): Promise<string> {
  const d = await driver();
  const path = join(tempDir(), 'lease.db');
  const db = d.open(path, { busyTimeoutMs: 1_000 });
  db.exec('PRAGMA journal_mode=WAL');
  db.exec('CREATE TABLE t (x INTEGER)');
  db.close();
  return path;
}

/**
 * Runs `fn` while another connection keeps the database open (so its WAL
 * index is live, as it is whenever a writer holds the lock), with `record`
 * added to the lock table as another process would have claimed it.
 * Returns the record's index.
 */
async function beside<T>(path: string, record: Buffer, fn: (index: number) => Promise<T>): Promise<T> {
  const keeper = (await driver()).open(path, { busyTimeoutMs: 1_000 });
  try {
    keeper.prepare('SELECT count(*) AS n FROM t').get();
    const index = readFileSync(lockTablePath(path)).length / RECORD_SIZE;
    appendFileSync(lockTablePath(path), record);
    return await fn(index);
  } finally {
    keeper.close();
  }
}

/** A record holding the WAL write lock (slot 0 exclusive) and the database SHARED lock, lease stamped `ageMs` ago. */
function writerRecord(owner: LockOwner, ageMs: number): Buffer {
  const rec = Buffer.alloc(RECORD_SIZE);
  writeRecordHead(rec, 0, owner, { stampMs: (currentStampMs() - ageMs) >>> 0, bootClock: clockIsBoots() });
  rec[REC.dbShared] = 1;
  rec[REC.shmOpen] = 1;
  rec[REC.shmExclusive] = 1;
  return rec;
}

/** Inserts a row in a write transaction (throwing what it throws). `beforeClose` sees the lock table while still open. */
async function insert(path: string, busyTimeoutMs: number, beforeClose: () => void = () => {}): Promise<void> {
  const db = (await driver()).open(path, { busyTimeoutMs });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('INSERT INTO t VALUES (1)');
    db.exec('COMMIT');
    beforeClose();
  } finally {
    db.close();
  }
}

describe('wasm lock table: owners judged without their pid', () => {
  it('respects the write lock of another pid namespace\'s owner while its lease runs (pid 1 there is not init here)', async () => {
    const path = await database();
    await beside(path, writerRecord(otherNamespace(1), 0), async (index) => {
      await expectError(() => insert(path, 300), DbError, 'busy');
      const head = readRecordHead(readFileSync(lockTablePath(path)), index * RECORD_SIZE);
      expect(head.owner.pid).toBe(1);
      expect(isRevoked(head)).toBe(false);
    });
  });

  it('revokes the lease of another pid namespace\'s owner that expired (crashed or stopped) and takes its lock', async () => {
    const path = await database();
    let head: ReturnType<typeof readRecordHead> | undefined;
    await beside(path, writerRecord(otherNamespace(1), LEASE_EXPIRY_MS + 5_000), async (index) => {
      await expect(insert(path, 2_000, () => (head = readRecordHead(readFileSync(lockTablePath(path)), index * RECORD_SIZE)))).resolves.toBeUndefined();
    });
    // The revocation stays in the record: should the owner wake up, it finds it and fences itself.
    expect(head?.owner.pid).toBe(1);
    expect(head !== undefined && isRevoked(head)).toBe(true);
  });

  it('takes the lock of a dead owner of this pid namespace at once', async () => {
    const path = await database();
    await beside(path, writerRecord({ pid: DEAD_PID, startTime: 1, connection: 1, realm: currentProcess().realm }, 0), async () => {
      await expect(insert(path, 2_000)).resolves.toBeUndefined();
    });
  });

  it('refuses to open beside a record of an older agentbus (no realm) whose process is not visible here, naming it and what to do', async () => {
    const path = await database();
    const legacy = Buffer.alloc(RECORD_SIZE);
    legacy.writeUInt32LE(DEAD_PID, REC.pid);
    legacy.writeUInt32LE(1, REC.connection);
    legacy.writeDoubleLE(12345, REC.startTime);
    legacy[REC.dbShared] = 1;
    writeFileSync(lockTablePath(path), legacy);
    const d = await driver();
    const error = await expectError(() => d.open(path, { busyTimeoutMs: 1_000 }).close(), DbError, 'lock_owner_unknown');
    expect(error.message).toContain(String(DEAD_PID));
    expect(error.message).toContain(lockTablePath(path));
    expect(readFileSync(lockTablePath(path))).toEqual(legacy);
  });

  it('opens beside a record of an older agentbus whose process runs here (same pid and start time)', async () => {
    const path = await database();
    const legacy = Buffer.alloc(RECORD_SIZE);
    legacy.writeUInt32LE(process.pid, REC.pid);
    legacy.writeUInt32LE(99, REC.connection);
    legacy.writeDoubleLE(currentProcess().startTime, REC.startTime);
    legacy[REC.dbShared] = 1;
    writeFileSync(lockTablePath(path), legacy);
    await expect(insert(path, 2_000)).resolves.toBeUndefined();
  });

  it('keeps renewing its lease while its thread is blocked in a busy wait (no timer can run then)', async () => {
    const d = await driver();
    const { dir, dbPath } = createDatabase(d);
    const far = Date.now() + 60_000;
    const holder = startChild('holder', 'holder', dbPath, dir, far);
    while (!holder.stdout.includes('locked')) {
      if (holder.proc.exitCode !== null) throw new Error(`holder exited: ${holder.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const waiter = startChild('writer', 'waiter', dbPath, dir, Date.now() + 8_000);
    const stampOf = (): number | undefined => {
      const table = readFileSync(lockTablePath(dbPath));
      for (let base = 0; base + RECORD_SIZE <= table.length; base += RECORD_SIZE) {
        const head = readRecordHead(table, base);
        if (head.owner.pid === waiter.proc.pid) return head.lease.stampMs;
      }
      return undefined;
    };
    while (stampOf() === undefined) await new Promise((r) => setTimeout(r, 50));
    // The waiter now sits in BEGIN IMMEDIATE's busy wait (10 s timeout) for as long as the holder holds on.
    const seen = new Set<number>();
    const started = Date.now();
    while (Date.now() - started < 4_000) {
      const stamp = stampOf();
      if (stamp !== undefined) seen.add(stamp);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen.size, 'distinct lease stamps seen in 4 s of busy waiting').toBeGreaterThanOrEqual(3);
    holder.proc.stdin?.write('commit\n');
    await waitAll([holder, waiter], Date.now() + 20_000);
  }, 60_000);

  it('a connection whose lock table or -shm is deleted under it stops within a second with an error, instead of losing updates silently', async () => {
    const d = await driver();
    for (const victim of ['-locks', '-shm']) {
      const path = join(tempDir(), 'deleted.db');
      const db = d.open(path, { busyTimeoutMs: 1_000 });
      db.exec('PRAGMA journal_mode=WAL');
      db.exec('CREATE TABLE t (x INTEGER)');
      db.exec('INSERT INTO t VALUES (1)');
      rmSync(`${path}${victim}`);
      // The lease keeper looks at the files once a second (its timer runs while the event loop is free).
      await new Promise((r) => setTimeout(r, 2_500));
      let error: unknown;
      try {
        db.exec('INSERT INTO t VALUES (2)');
      } catch (e) {
        error = e;
      }
      expect(error, `after deleting ${victim}`).toBeInstanceOf(Error);
      try {
        db.close();
      } catch {
        // A fenced connection may report its last error on close.
      }
      // A new connection uses the new files and sees only what was committed before.
      const fresh = d.open(path, { busyTimeoutMs: 1_000 });
      expect(fresh.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
      expect(fresh.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
      fresh.close();
    }
  }, 30_000);
});
