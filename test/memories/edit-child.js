// A child process for the cross-process memory test: registers its own
// identity and edits one memory repeatedly, printing every result as one JSON
// line at the end. Runs compiled code from dist/ with AGENTBUS_DRIVER.
//   node edit-child.js <dataDir> <memoryId> <edits> <name>
import * as v from 'valibot';
import { register } from '../../dist/src/bus/identity.js';
import { editMemory } from '../../dist/src/bus/memories.js';
import { systemClock } from '../../dist/src/clock.js';
import { ConfigFileSchema } from '../../dist/src/config.js';
import { openDatabase } from '../../dist/src/db/open-database.js';
import { currentProcess } from '../../dist/src/db/process-identity.js';
import { createMemoryLogger } from '../../dist/src/log.js';

const [dataDir, memoryId, edits, name] = process.argv.slice(2);
const driver = process.env.AGENTBUS_DRIVER;
const { db } = await openDatabase({ dataDir, driver });
const config = {
  ...v.parse(ConfigFileSchema, {}),
  data_directory: dataDir,
  driver,
  embedding_api_key_file: undefined,
  configPath: `${dataDir}/config.json`,
  configFileFound: false,
};
const ctx = {
  db,
  config,
  clock: systemClock,
  log: createMemoryLogger('info'),
  owner: `child-${process.pid}`,
  processIdentity: currentProcess(),
  defaultContext: name,
};
const as = register(ctx, { name }).display_name;
const results = [];
for (let i = 0; i < Number(edits); i++) {
  results.push(await editMemory(ctx, { as, memory_id: Number(memoryId), content: `${name} edit ${i}` }));
}
db.close();
process.stdout.write(JSON.stringify(results) + '\n');
