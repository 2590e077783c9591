/**
 * The bridge worker's listening connection (docs/architecture.md, "Wake-ups
 * across machines"): a second pg client that only runs `LISTEN channel` and
 * posts each notification's payload to the calling thread's wake port. It
 * never blocks a call: it has its own socket, and the calling thread reads
 * the port as ordinary events. Lost (a server restart, pg_terminate_backend,
 * a network error), it reconnects by itself with a growing pause. Once each
 * LISTEN is in place, the first one included, it posts `*`: notifications
 * sent before it (while reconnecting, or between the first subscription and
 * the first LISTEN) were missed, so every waiter looks once now instead of
 * at its poll.
 */
import type { MessagePort } from 'node:worker_threads';
import pg, { type Client } from 'pg';

/** The listening connection's `application_name`, what pg_stat_activity shows for it. */
export const LISTEN_APPLICATION_NAME = 'agentbus-listen';

/** The first pause before reconnecting, and the longest (it doubles in between). */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/** What the listener needs of the worker's settings. */
export interface ListenerSettings {
  /** The connection URL, password included. */
  readonly url: string;
  /** How long connecting may take, in ms. */
  readonly connectTimeoutMs: number;
}

export interface Listener {
  /** Stops for good and ends the connection. */
  close(): Promise<void>;
}

/** `name` quoted as an SQL identifier (LISTEN takes no parameter). */
function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Listens on `channel` until close(), posting each payload (and `*` after
 * each LISTEN) on `port`. Long, as one closure of a little over 60 lines: the
 * client, the retry timer and the closed flag are shared by connect, its
 * loss handler and close, and split apart they would need a state object.
 */
export function startListener(settings: ListenerSettings, channel: string, port: MessagePort): Listener {
  let client: Client | undefined;
  let closed = false;
  let retryMs = RETRY_FIRST_MS;
  let timer: NodeJS.Timeout | undefined;

  const retry = (): void => {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  const connect = async (): Promise<void> => {
    const fresh = new pg.Client({
      connectionString: settings.url,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      application_name: LISTEN_APPLICATION_NAME,
      // A peer that vanished without a word (a dropped network) is noticed by the kernel in time; the poll covers until then.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let lost = false;
    const onLost = (): void => {
      if (lost) return;
      lost = true;
      if (client === fresh) client = undefined;
      fresh.end().catch(() => undefined);
      retry();
    };
    fresh.on('error', onLost);
    fresh.on('end', onLost);
    fresh.on('notification', (message) => {
      if (message.channel === channel) port.postMessage(message.payload ?? '');
    });
    try {
      await fresh.connect();
      await fresh.query(`LISTEN ${identifier(channel)}`);
    } catch {
      onLost();
      return;
    }
    if (lost) return;
    if (closed) {
      await fresh.end().catch(() => undefined);
      return;
    }
    client = fresh;
    retryMs = RETRY_FIRST_MS;
    // Also after the first: a commit between the subscription and this LISTEN was not heard.
    port.postMessage('*');
  };

  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const gone = client;
      client = undefined;
      await gone?.end().catch(() => undefined);
      port.close();
    },
  };
}
