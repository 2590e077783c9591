// A child process that keeps sending while the parent runs maintenance. It
// runs compiled code from dist/ with the driver named in AGENTBUS_DRIVER.
//   write <dataDir> <channel> <count>   one message per write transaction (like send);
//                                       prints "started" after the first, then {"seqs": [...]}
import { openDatabase } from '../../../dist/src/db/open-database.js';

const [mode, dataDir, channel, count] = process.argv.slice(2);
if (mode !== 'write') throw new Error(`unknown mode ${mode}`);
const { db } = await openDatabase({ dataDir, driver: process.env.AGENTBUS_DRIVER });
const seqs = [];
for (let i = 0; i < Number(count); i++) {
  const content = `concurrent message ${i}`;
  const { lastInsertRowid } = db.transaction(() =>
    db.run(
      "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES (?, 'bob', 'ctx', ?, 'note', ?, ?)",
      [channel, Date.now(), content, Buffer.byteLength(content)],
    ),
  );
  seqs.push(lastInsertRowid);
  if (i === 0) process.stdout.write('started\n');
}
db.close();
process.stdout.write(JSON.stringify({ seqs }) + '\n');
