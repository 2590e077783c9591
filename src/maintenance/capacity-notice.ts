/**
 * The capacity notice: one row of `notices`, shown in every receive result
 * while set, telling people the budget is full and how to get out.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';

export const CAPACITY_NOTICE = 'capacity';

/** The notice text: the budget, the config file, and the two ways out. */
export function capacityNoticeMessage(config: Config): string {
  return (
    `agentbus is out of space: live memories (and memory revisions too recent to purge) fill the ` +
    `${config.sqlite_budget_mib} MiB budget, so new messages and memory edits are refused with capacity_exhausted. ` +
    `Either raise sqlite_budget_mib in ${config.configPath}, or run \`agentbus reset\` to wipe all bus data.`
  );
}

/** Sets (or refreshes the text of) the capacity notice; keeps the original `set_at`. */
export function setCapacityNotice(db: Database, config: Config, now: number): void {
  db.run(
    'INSERT INTO notices (kind, message, set_at) VALUES (?, ?, ?) ON CONFLICT (kind) DO UPDATE SET message = excluded.message',
    [CAPACITY_NOTICE, capacityNoticeMessage(config), now],
  );
}

/** Clears the capacity notice; true when one was set. */
export function clearCapacityNotice(db: Database): boolean {
  return db.run('DELETE FROM notices WHERE kind = ?', [CAPACITY_NOTICE]).changes > 0;
}

/** The capacity notice, when set. */
export function readCapacityNotice(db: Database): { readonly message: string; readonly setAt: number } | undefined {
  const row = db.get<{ message: string; set_at: number }>('SELECT message, set_at FROM notices WHERE kind = ?', [CAPACITY_NOTICE]);
  return row === undefined ? undefined : { message: row.message, setAt: row.set_at };
}
