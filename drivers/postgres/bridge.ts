/**
 * The calling half of the synchronous bridge (docs/architecture.md, "An
 * asynchronous engine"): a worker thread owns the pg client; call() posts
 * one request and blocks in Atomics.wait until its reply, or until the
 * deadline. At the deadline it tells the worker to drop the connection and
 * throws `unavailable`: a dropped network is an error within the deadline,
 * never a hang. Replies carry the request's id, so a late one is dropped.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { DbError } from '../../src/db/contract/db-error.js';
import type { BridgeReply, BridgeRequest, BridgeSettings } from './bridge-protocol.js';

/**
 * The worker's file: the bundle's sibling (dist/bundle/postgres-worker.cjs),
 * the compiled module beside this one (dist/drivers/postgres/), or, for
 * this source file run by the tests, the built bundle. Checked before the
 * thread starts: a thread that cannot load would answer no call, and each
 * call would wait its whole deadline.
 */
function workerFile(): URL {
  const candidates = ['./postgres-worker.cjs', './bridge-worker.js', '../../dist/bundle/postgres-worker.cjs'].map((p) => new URL(p, import.meta.url));
  const found = candidates.find((file) => existsSync(file));
  if (found === undefined) throw new DbError('driver_unavailable', `the postgres driver's worker is missing (looked for ${candidates.map((c) => c.pathname).join(', ')}): reinstall agentbus, or run \`npm run build\` in a checkout`);
  return found;
}

/** A request as the connection builds it; the bridge numbers it. */
export type BridgeCall = BridgeRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export class Bridge {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #flag: Int32Array;
  readonly #where: string;
  #wakePort: MessagePort | undefined;
  #nextId = 1;

  /** Starts the worker; it connects on the first request. `where` names the server in messages. */
  constructor(settings: Omit<BridgeSettings, 'flag'>, where: string) {
    this.#flag = new Int32Array(new SharedArrayBuffer(4));
    const channel = new MessageChannel();
    this.#port = channel.port1;
    this.#where = where;
    this.#worker = new Worker(workerFile(), {
      workerData: { settings: { ...settings, flag: this.#flag }, port: channel.port2 },
      transferList: [channel.port2],
    });
    // Neither the thread nor its port keeps a process alive that is done otherwise.
    this.#worker.unref();
    this.#port.unref();
  }

  /**
   * Runs one request and returns its reply; throws DbError `unavailable`
   * when no reply came within `deadlineMs` (the worker then drops the
   * connection, and the next call connects again).
   */
  call(request: BridgeCall, deadlineMs: number): BridgeReply {
    const id = this.#nextId++;
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage({ ...request, id });
    const until = performance.now() + deadlineMs;
    for (;;) {
      // Drain before waiting: a reply may be queued before its flag was set.
      const received = receiveMessageOnPort(this.#port);
      if (received !== undefined) {
        const reply = received.message as BridgeReply;
        if (reply.id === id) return reply;
        continue; // the late reply of a call that gave up
      }
      const left = until - performance.now();
      if (left <= 0) {
        this.#port.postMessage({ id: this.#nextId++, kind: 'abandon' });
        throw new DbError(
          'unavailable',
          `the PostgreSQL server ${this.#where} did not answer within ${Math.round(deadlineMs)} ms (a network or server outage); agentbus dropped the connection and connects again on the next call`,
        );
      }
      Atomics.wait(this.#flag, 0, 0, left);
      Atomics.store(this.#flag, 0, 0);
    }
  }

  /**
   * Has the worker LISTEN on `channel` on a connection of its own and calls
   * `onPayload` with each notification, asynchronously (an event of this
   * thread's loop, never inside call()). Once per bridge.
   */
  listen(channel: string, onPayload: (payload: string) => void): void {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (payload: string) => onPayload(payload));
    // Wake-ups are wanted while the process runs for other reasons; they never keep it running.
    port1.unref();
    this.#wakePort = port1;
    this.#port.postMessage({ id: this.#nextId++, kind: 'listen', channel, port: port2 }, [port2]);
  }

  /** Ends the connection (waiting at most `deadlineMs`) and the worker. */
  close(deadlineMs: number): void {
    try {
      this.call({ kind: 'close' }, deadlineMs);
    } catch {
      // A server that does not answer cannot be said goodbye to.
    }
    void this.#worker.terminate();
    this.#port.close();
    this.#wakePort?.close();
  }
}
