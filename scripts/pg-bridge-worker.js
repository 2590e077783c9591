// The worker half of the synchronous bridge measured by bench-pg-contract.js:
// one pg client on its own thread; the main thread posts {sql, params} on the
// port, blocks in Atomics.wait on `flag`, and reads the reply with
// receiveMessageOnPort once the flag turns 1.
import { workerData } from 'node:worker_threads';
import pg from 'pg';

const { flag, url, port } = workerData;

function reply(message) {
  port.postMessage(message);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

const client = new pg.Client({ connectionString: url });
await client.connect();
port.on('message', async ({ sql, params }) => {
  try {
    const result = await client.query(sql, params);
    reply({ rows: result.rows, rowCount: result.rowCount });
  } catch (error) {
    reply({ error: { message: error.message, code: error.code } });
  }
});
reply({ ready: true });
