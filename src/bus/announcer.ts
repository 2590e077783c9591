/**
 * Which bells a commit rings (see change-waiter.ts). Called after a committed
 * transaction that may have added messages (BusContext.announce), it reads
 * the rows added since its last call: when they are all direct messages, it
 * rings the bell of each addressee and the direct bell, so servers holding
 * none of those names are not woken; anything else (a channel message, a
 * memory edit, a deletion that added no row, more rows than it reads, a
 * failed read) rings the shared bell, which wakes everyone, as before.
 * Reading here, once in the writer, is what spares the readers: without it
 * every server of the bus wakes and looks on every direct message.
 */
import { DIRECT_BELL_FILE, nameBellPath, ringBell, ringBellFile } from './change-waiter.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import type { Database } from '../db/database.js';
import { join } from 'node:path';

/** Rows read per call; a larger burst rings the shared bell. */
const MAX_ROWS = 1000;

/** An announce function for commits through `db` (open): never throws; `onFailure` hears a bell that could not be rung. */
export function createAnnouncer(db: Database, dataDir: string, onFailure: (what: string) => void = () => undefined): () => void {
  // Rows up to here were committed before this announcer existed: never this process's to announce.
  let last = db.read(() => db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0);
  const ringShared = (): void => {
    if (!ringBell(dataDir)) onFailure('the bell');
  };
  return () => {
    try {
      const { rows, addressees } = db.read(() => {
        const rows = db.all<{ seq: number; channel: string }>('SELECT seq, channel FROM messages WHERE seq > ? ORDER BY seq LIMIT ?', [last, MAX_ROWS + 1]);
        const direct = rows.length > 0 && rows.length <= MAX_ROWS && rows.every((r) => r.channel === DIRECT_CHANNEL);
        const addressees = direct
          ? db.all<{ addressee: string }>('SELECT DISTINCT addressee FROM direct_recipients WHERE seq IN (SELECT value FROM json_each(?))', [JSON.stringify(rows.map((r) => r.seq))]).map((r) => r.addressee)
          : undefined;
        return { rows, addressees };
      });
      if (rows.length > 0) last = (rows.at(-1) as { seq: number }).seq;
      if (addressees === undefined) return ringShared();
      for (const name of addressees) if (!ringBellFile(nameBellPath(dataDir, name))) onFailure(`the bell of ${name}`);
      if (!ringBellFile(join(dataDir, DIRECT_BELL_FILE))) onFailure('the direct bell');
    } catch {
      ringShared();
    }
  };
}
