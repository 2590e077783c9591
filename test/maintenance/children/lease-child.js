// A child process racing for the maintenance lease. It runs compiled code
// from dist/ with the driver named in AGENTBUS_DRIVER.
//   race <dataDir> <attempts> <ttlMs>   try the lease <attempts> times; print {"owner", "wins"}
import { systemClock } from '../../../dist/src/clock.js';
import { openDatabase } from '../../../dist/src/db/open-database.js';
import { acquireLease } from '../../../dist/src/maintenance/lease.js';
import { sleepSync } from '../../../dist/src/db/sleep-sync.js';

const [mode, dataDir, attempts, ttlMs] = process.argv.slice(2);
if (mode !== 'race') throw new Error(`unknown mode ${mode}`);
const { db } = await openDatabase({ dataDir, driver: process.env.AGENTBUS_DRIVER });
const owner = `pid-${process.pid}`;
let wins = 0;
for (let i = 0; i < Number(attempts); i++) {
  // No process identity: the winner may finish and exit while the others still
  // race, and its lease must then run out on the shared monotonic clock, not
  // end with its process.
  if (acquireLease(db, { owner, process: undefined, clock: systemClock }, Number(ttlMs))) wins++;
  sleepSync(1);
}
db.close();
process.stdout.write(JSON.stringify({ owner, wins }) + '\n');
