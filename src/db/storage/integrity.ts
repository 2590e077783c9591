/** SQLite's integrity check, as a list of problems (empty when the file is sound). */
import type { Database } from '../contract/database.js';
import { DbError } from '../contract/db-error.js';

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

/**
 * The tables a quick check leaves out: the messages, their full-text index
 * and their vectors, which are nearly all of a big file's pages (reading them
 * is what takes a full check seconds per hundred MiB).
 */
const QUICK_CHECK_SKIPS = "name IN ('messages', 'embeddings') OR name LIKE 'messages\\_fts%' ESCAPE '\\'";

/**
 * `PRAGMA quick_check` of every table but the big ones (QUICK_CHECK_SKIPS):
 * the schema, sessions, channels, subscriptions, leases and the like, which
 * decide whether the bus works, in milliseconds whatever the file's size.
 * Reading the schema at all also proves the first pages sound.
 */
export function quickIntegrityProblems(db: Database, maxErrors = 100): string[] {
  try {
    const tables = db.all<{ name: string }>(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND NOT (${QUICK_CHECK_SKIPS})`,
    );
    const problems: string[] = [];
    for (const { name } of tables) {
      const rows = db.all<Record<string, unknown>>(`PRAGMA quick_check("${name.replaceAll('"', '""')}")`);
      const messages = rows.map((r) => String(Object.values(r)[0]));
      if (!(messages.length === 1 && messages[0] === 'ok')) problems.push(...messages);
      if (problems.length >= maxErrors) break;
    }
    return problems.slice(0, maxErrors);
  } catch (error) {
    if (error instanceof DbError) return [`SQLite could not check the file: ${error.message}`];
    throw error;
  }
}
