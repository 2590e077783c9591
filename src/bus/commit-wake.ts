/**
 * How a commit that added messages (or edited a memory) wakes waiters in
 * every process, chosen by the engine's `wakeups` capability. On
 * 'bell-file' (SQLite) the bells are files touched after the commit
 * (BusContext.announce, change-waiter.ts): nothing happens inside the
 * transaction. On 'notify' (PostgreSQL) the transaction itself NOTIFYs
 * the keys of the bells it rings: the server delivers that at commit and
 * never before (nor at all after a rollback), to every listener on the
 * database, on any machine; the bell files are not touched.
 */
import type { Database } from '../db/contract/database.js';
import { WAKE_CHANNEL } from '../db/contract/driver.js';
import type { BusContext } from './bus-context.js';
import { bellKeys } from './change-waiter.js';

/** Inside the write transaction, last: on 'notify', the one NOTIFY of this commit's bells (the common one, or a direct message's). */
export function wakeAtCommit(db: Database, addressees?: readonly string[]): void {
  if (db.capabilities.wakeups !== 'notify') return;
  db.get('SELECT pg_notify(?, ?) AS sent', [WAKE_CHANNEL, bellKeys(addressees).join(' ')]);
}

/** After the commit: on 'bell-file', ring the bells through ctx.announce (a 'notify' commit rang at commit). */
export function wakeAfterCommit(ctx: BusContext, addressees?: readonly string[]): void {
  if (ctx.db.capabilities.wakeups === 'bell-file') ctx.announce?.(addressees);
}
