/** SQLite's integrity check, as a list of problems (empty when the file is sound). */
import type { Database } from './database.js';
import { DbError } from './db-error.js';

/**
 * Runs `PRAGMA integrity_check`; a file so damaged that SQLite cannot even
 * read it (SQLITE_CORRUPT, SQLITE_NOTADB) is reported as a problem, not thrown.
 */
export function integrityProblems(db: Database, maxErrors = 100): string[] {
  try {
    const rows = db.all<{ integrity_check: string }>(`PRAGMA integrity_check(${maxErrors})`);
    const messages = rows.map((r) => String(Object.values(r)[0]));
    return messages.length === 1 && messages[0] === 'ok' ? [] : messages;
  } catch (error) {
    if (error instanceof DbError) return [`SQLite could not check the file: ${error.message}`];
    throw error;
  }
}
