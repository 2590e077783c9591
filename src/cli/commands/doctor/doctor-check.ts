/**
 * One line of `agentbus doctor`'s report: every doctor-*.ts check returns
 * one, and doctor-command.ts puts them in order.
 */

export type CheckStatus = 'ok' | 'warn' | 'problem' | 'fixed';

export interface Check {
  /**
   * Stable id for scripts: config, data_directory, file_system, disk, database, new_database (no database yet), lock_protocol, wal, schema, integrity, stale_locks, shared_files;
   * on a server (database_url): database_url, server, schema, privileges, wakeups.
   */
  readonly name: string;
  /** How it went. */
  readonly status: CheckStatus;
  /** What was found and, unless ok, what to do. */
  readonly message: string;
  /** The storage layer's error code (DbError) behind a warn or problem, when one was thrown: `permission`, `unavailable`, `schema_newer`, ... */
  readonly code?: string;
}

/** The check `name` for an error a check caught: the DbError's sentence and code (the same the opener would throw), else the error's message. */
export function checkOfError(name: string, error: unknown, status: CheckStatus = 'problem'): Check {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? { name, status, message, code } : { name, status, message };
}
