// One writer of scripts/bench-namespaces.js's lost-update counter, in a fresh
// process (possibly inside another pid namespace). It loads the wasm driver of
// the build it is given, so one run can compare two checkouts.
//   node scripts/bench-counter-writer.js <wasm-driver.js> <db> <log> <ms> <writerId>
// Each transaction is BEGIN IMMEDIATE, read n, write n+1, record (writer, seq,
// n+1), COMMIT; only after COMMIT returns is seq appended to <log>, so a logged
// seq is an acknowledged commit. Runs <ms> from its open, then prints one JSON
// line; an error other than busy ends it with exit 1 and the error in that line.
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [driverModule, dbPath, logPath, msText, writerId] = process.argv.slice(2);
const { loadWasmDriver } = await import(pathToFileURL(driverModule).href);
const loaded = await loadWasmDriver();
if (!loaded.ok) {
  process.stdout.write(JSON.stringify({ writerId, error: `wasm driver unavailable: ${loaded.reason}` }) + '\n');
  process.exit(1);
}

let db;
let seq = 0;
let busy = 0;
try {
  db = loaded.driver.open(dbPath, { busyTimeoutMs: 10_000 });
  db.exec('PRAGMA synchronous=NORMAL');
  const deadline = Date.now() + Number(msText);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const read = db.prepare('SELECT n FROM counter WHERE id = 1');
  const bump = db.prepare('UPDATE counter SET n = ? WHERE id = 1');
  const record = db.prepare('INSERT INTO incs (writer, seq, value) VALUES (?, ?, ?)');
  while (Date.now() < deadline) {
    try {
      begin.run();
    } catch (error) {
      if (error.code === 'busy') {
        busy++;
        continue;
      }
      throw error;
    }
    try {
      const n = read.get().n;
      bump.run([n + 1]);
      record.run([writerId, seq + 1, n + 1]);
      commit.run();
    } catch (error) {
      try {
        rollback.run();
      } catch {
        // SQLite already rolled it back.
      }
      if (error.code === 'busy') {
        busy++;
        continue;
      }
      throw error;
    }
    seq++;
    appendFileSync(logPath, `${seq}\n`);
  }
  db.close();
  process.stdout.write(JSON.stringify({ writerId, committed: seq, busy }) + '\n');
} catch (error) {
  process.stdout.write(JSON.stringify({ writerId, committed: seq, busy, error: `${error.code ?? ''} ${error.message}`.trim() }) + '\n');
  process.exit(1);
}
