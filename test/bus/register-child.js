// A child process for the cross-process registration test: opens the
// database from compiled dist/ code, waits for a shared start instant, then
// registers `name` with its own owner token and prints the display name. It
// stays alive (holding the name, as a running agent does) until its stdin closes.
//   node register-child.js <dataDir> <owner> <name> <startAtMs>
import { register } from '../../dist/src/bus/identity.js';
import { systemClock } from '../../dist/src/clock.js';
import { loadConfig } from '../../dist/src/config.js';
import { openDatabase } from '../../dist/src/db/open-database.js';
import { currentProcess } from '../../dist/src/db/process-identity.js';
import { createMemoryLogger } from '../../dist/src/log.js';

const [dataDir, owner, name, startAt] = process.argv.slice(2);
const { db } = await openDatabase({ dataDir, driver: process.env.AGENTBUS_DRIVER });
const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dataDir }, homeDir: dataDir, cwd: dataDir });
const ctx = { db, config, clock: systemClock, log: createMemoryLogger(), owner, processIdentity: currentProcess(), defaultContext: 'child' };
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 1));
const result = register(ctx, { name });
process.stdout.write(`${JSON.stringify(result)}\n`);
process.stdin.resume();
await new Promise((resolve) => process.stdin.once('end', resolve));
db.close();
