/**
 * Waiting until the wake sources of a test's processes hear commits. On a
 * `wakeups: 'notify'` database each connection's wake source LISTENs on a
 * connection of its own, which its first subscriber starts and which takes a
 * moment to be in place (a commit before it is heard only by the poll, or by
 * the `*` every LISTEN posts once in place); a bell-file waiter watches its
 * bells from creation, so there is nothing to wait for. And ending them, to
 * see a wake source come back.
 */
import { LISTEN_APPLICATION_NAME } from '../../drivers/postgres/bridge-listener.js';
import type { Database } from '../../src/db/contract/database.js';

/** Resolves once `count` listening connections are in place on `db`'s database (at once on a bell-file one); fails after 15 s. */
export async function wakeSourcesListening(db: Database, count: number): Promise<void> {
  if (db.capabilities.wakeups !== 'notify') return;
  const until = Date.now() + 15_000;
  for (;;) {
    const found =
      db.get<{ n: number }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? AND state = 'idle' AND query LIKE 'LISTEN%'",
        [LISTEN_APPLICATION_NAME],
      )?.n ?? 0;
    if (found >= count) break;
    if (Date.now() > until) throw new Error(`${found} of ${count} listening connections in place after 15 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  // Each posted its `*` on completing LISTEN: let those reach their waiters before the test counts wake-ups.
  await new Promise((r) => setTimeout(r, 200));
}

/** Ends every listening connection on `db`'s database (a `wakeups: 'notify'` one), as a server restart would; returns how many. */
export function endWakeListeners(db: Database): number {
  return db.all('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?', [LISTEN_APPLICATION_NAME]).length;
}
