/**
 * The set-up lock (both drivers) with owners that cannot be judged by pid:
 * an owner in another pid namespace is judged by the lease stamp it wrote,
 * on the monotonic clock; one of this namespace by pid. Real lock
 * directories on disk, opened through openDatabase.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DbError } from '../../src/db/contract/db-error.js';
import { databasePath, prepareDataDir } from '../../src/db/open/open-database.js';
import { currentStampMs, LEASE_EXPIRY_MS } from '../../src/db/lock-records/owner-lease.js';
import { clockIsBoots, currentProcess, formatProcessIdentity, type ProcessIdentity } from '../../src/db/processes/process-identity.js';
import { setupLockDir } from '../../src/db/open/setup-lock.js';
import { expectError } from '../support/expect-error.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

/** A pid above Linux's pid_max (2^22): no process can have it. */
const DEAD_PID = 4_194_305;

/** Leaves a set-up lock as a holder would: lease stamped `ageMs` ago, then the owner. */
function leaveSetupLock(dataDir: string, owner: ProcessIdentity, ageMs: number | undefined): string {
  const dir = setupLockDir(databasePath(prepareDataDir(dataDir)));
  mkdirSync(dir);
  if (ageMs !== undefined) writeFileSync(join(dir, 'lease'), `${(currentStampMs() - ageMs) >>> 0} ${clockIsBoots() ? 'b' : '-'}`);
  writeFileSync(join(dir, 'owner'), formatProcessIdentity(owner));
  return dir;
}

function otherNamespace(pid: number): ProcessIdentity {
  const me = currentProcess().realm;
  if (me === undefined) throw new Error('this test needs /proc (Linux)');
  return { pid, startTime: 777, realm: { boot: me.boot, pidNamespace: me.pidNamespace + 1 } };
}

/** Opens the bus database (waiting up to `setupTimeoutMs` for the set-up lock) and closes it. */
async function openAndClose(dataDir: string, setupTimeoutMs: number): Promise<void> {
  (await openTestDatabase(dataDir, { setupTimeoutMs })).db.close();
}

describe('set-up lock owners that cannot be judged by pid', () => {
  it('takes over the lock of a dead process of this pid namespace at once', async () => {
    const dir = tempDir();
    leaveSetupLock(dir, { pid: DEAD_PID, startTime: 1, realm: currentProcess().realm }, undefined);
    const started = performance.now();
    await expect(openAndClose(dir, 5_000)).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('waits for a lock of another pid namespace while its lease runs, and names its holder when it gives up', async () => {
    const dir = tempDir();
    // pid 1 there: pid 1 here is init and alive; the holder must not be judged by it.
    leaveSetupLock(dir, otherNamespace(1), 0);
    const error = await expectError(() => openAndClose(dir, 1_500), DbError, 'setup_timeout');
    expect(error.message).toMatch(/pid 1 in another pid namespace or machine, lease last renewed [0-9.]+ s ago/);
  });

  it('takes over a lock of another pid namespace whose lease expired (a crashed container)', async () => {
    const dir = tempDir();
    leaveSetupLock(dir, otherNamespace(1), LEASE_EXPIRY_MS + 5_000);
    await expect(openAndClose(dir, 5_000)).resolves.toBeUndefined();
  });

  it('never takes over a lock an older agentbus left without a lease in another pid namespace; waits, then names it', async () => {
    const dir = tempDir();
    leaveSetupLock(dir, otherNamespace(1), undefined);
    const error = await expectError(() => openAndClose(dir, 1_000), DbError, 'setup_timeout');
    expect(error.message).toMatch(/older agentbus/);
  });
});
