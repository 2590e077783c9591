// A child process for the cross-process registration test: opens the
// database from compiled dist/ code, waits for a shared start instant, then
// registers `name` with its own owner token and prints the display name.
//   node register-child.js <dataDir> <owner> <name> <startAtMs>
import { register } from '../../dist/src/bus/identity.js';
import { loadConfig } from '../../dist/src/config.js';
import { openDatabase } from '../../dist/src/db/open-database.js';
import { createMemoryLogger } from '../../dist/src/log.js';

const [dataDir, owner, name, startAt] = process.argv.slice(2);
const { db } = await openDatabase({ dataDir, driver: process.env.AGENTBUS_DRIVER });
const config = loadConfig({ env: { AGENTBUS_DATA_DIR: dataDir }, homeDir: dataDir, cwd: dataDir });
const ctx = { db, config, clock: { now: () => Date.now() }, log: createMemoryLogger(), owner, defaultContext: 'child' };
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 1));
const result = register(ctx, { name });
process.stdout.write(`${JSON.stringify(result)}\n`);
db.close();
