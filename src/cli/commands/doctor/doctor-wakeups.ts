/**
 * doctor's `wakeups` check on a server: one LISTEN/NOTIFY round trip on the
 * bus's channel (WAKE_CHANNEL), through the connection's own wake source, as
 * a waiting agent hears a commit of another machine. The notification is
 * sent again until it comes back (the listening connection starts with the
 * first subscriber), for at most WAKEUP_WAIT_MS. Its payload is a key no bell
 * has, so it wakes no waiting agent. Not arriving is a warning: agents still
 * get every message, at the poll.
 */
import { randomUUID } from 'node:crypto';
import { POLL_INTERVAL_MS } from '../../../bus/change-waiter.js';
import type { Database } from '../../../db/contract/database.js';
import { WAKE_CHANNEL, type DriverCapabilities } from '../../../db/contract/driver.js';
import { checkOfError, type Check } from './doctor-check.js';

/** How long the round trip may take before the check gives up. */
export const WAKEUP_WAIT_MS = 3_000;

/** How often the notification is sent until it comes back. */
const RESEND_MS = 200;

/** What not hearing notifications costs. */
const FALLBACK = `waits fall back to polling (every ${POLL_INTERVAL_MS} ms): agents still get every message, a little later and with more queries`;

export function checkWakeups(db: Database<DriverCapabilities>, waitMs = WAKEUP_WAIT_MS): Promise<Check> {
  const source = db.wakeSource;
  if (source === undefined) return Promise.resolve({ name: 'wakeups', status: 'warn', message: `this driver hears no notifications: ${FALLBACK}` });
  const key = `doctor-${randomUUID()}`;
  const started = performance.now();
  return new Promise((resolve) => {
    let sender: NodeJS.Timeout | undefined;
    let timer: NodeJS.Timeout | undefined;
    let unsubscribe: (() => void) | undefined;
    const finish = (check: Check): void => {
      clearInterval(sender);
      clearTimeout(timer);
      unsubscribe?.();
      resolve(check);
    };
    unsubscribe = source.subscribe((payload) => {
      if (payload !== key) return;
      const ms = Math.round(performance.now() - started);
      finish({ name: 'wakeups', status: 'ok', message: `LISTEN/NOTIFY on ${WAKE_CHANNEL}: round trip in ${ms} ms; a commit on any machine wakes waiting agents at once` });
    });
    const send = (): void => {
      try {
        db.get('SELECT pg_notify(?, ?) AS sent', [WAKE_CHANNEL, key]);
      } catch (error) {
        const failed = checkOfError('wakeups', error, 'warn');
        finish({ ...failed, message: `cannot NOTIFY on ${WAKE_CHANNEL} (${failed.message}): ${FALLBACK}` });
      }
    };
    sender = setInterval(send, RESEND_MS);
    timer = setTimeout(() => {
      finish({
        name: 'wakeups',
        status: 'warn',
        message: `no notification on ${WAKE_CHANNEL} came back within ${waitMs / 1000} s: the second connection, which listens, could not connect (the role's or the server's connection limit reached?) or hears nothing (a connection pooler in transaction mode, such as PgBouncer's, drops LISTEN: connect past it); ${FALLBACK}`,
      });
    }, waitMs);
    send();
  });
}
