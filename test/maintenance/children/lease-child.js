// A child process racing for the maintenance lease. It runs compiled code
// from dist/ with the driver named in AGENTBUS_DRIVER.
//   race <dataDir> <attempts> <ttlMs>   try the lease <attempts> times; print {"owner", "wins"}
import { openDatabase } from '../../../dist/src/db/open-database.js';
import { acquireLease } from '../../../dist/src/maintenance/lease.js';
import { sleepSync } from '../../../dist/src/db/sleep-sync.js';

const [mode, dataDir, attempts, ttlMs] = process.argv.slice(2);
if (mode !== 'race') throw new Error(`unknown mode ${mode}`);
const { db } = await openDatabase({ dataDir, driver: process.env.AGENTBUS_DRIVER });
const owner = `pid-${process.pid}`;
let wins = 0;
for (let i = 0; i < Number(attempts); i++) {
  if (acquireLease(db, owner, Date.now(), Number(ttlMs))) wins++;
  sleepSync(1);
}
db.close();
process.stdout.write(JSON.stringify({ owner, wins }) + '\n');
