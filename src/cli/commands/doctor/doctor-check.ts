/**
 * One line of `agentbus doctor`'s report: every doctor-*.ts check returns
 * one, and doctor-command.ts puts them in order.
 */
export type CheckStatus = 'ok' | 'warn' | 'problem' | 'fixed';

export interface Check {
  /** Stable id for scripts: config, data_directory, file_system, disk, database, new_database (no database yet), lock_protocol, wal, schema, integrity, stale_locks, shared_files. */
  readonly name: string;
  /** How it went. */
  readonly status: CheckStatus;
  /** What was found and, unless ok, what to do. */
  readonly message: string;
}
