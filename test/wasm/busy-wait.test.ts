/**
 * The wasm driver's busy wait with a real lock table: the refusal it is
 * handed may belong to a connection that has closed since (the file layer
 * keeps the last refusal per runtime). That must not end the wait: it failed
 * a lock wait at once, well inside its busy timeout.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BusyWaiter } from '../../drivers/wasm/busy-wait.js';
import { LockRecord } from '../../drivers/wasm/lock-table.js';
import { closeConnectionNumber, openConnectionNumber, selfOwner } from '../../drivers/wasm/owner-liveness.js';
import { tempDir } from '../support/test-driver.js';

describe('the wasm busy wait', () => {
  it("retries within its timeout when handed the refusal of a closed connection's lock record", () => {
    const dbPath = join(tempDir(), 'busy.db');
    const connection = openConnectionNumber();
    const record = LockRecord.claim(dbPath, selfOwner(connection));
    const stale = record.refused([0]);
    record.release();
    closeConnectionNumber(connection);
    expect(record.open).toBe(false);

    const waiter = new BusyWaiter(60_000, { takeRefusal: () => stale, refreshIndexes: () => undefined });
    expect(waiter.handle(0)).toBe(1);
    expect(waiter.handle(1)).toBe(1);
  });
});
