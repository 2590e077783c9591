/**
 * The one error class of the storage layer. Drivers throw it for every
 * SQLite failure; core throws it for refusals (wrong protocol, foreign file,
 * edited migrations). Callers branch on `code`, never on message text.
 */
export type DbErrorCode =
  /** Another connection holds a conflicting lock past the busy timeout. */
  | 'busy'
  /** A table is locked by this same connection (SQLITE_LOCKED). */
  | 'locked'
  /** A UNIQUE, NOT NULL, CHECK or FOREIGN KEY constraint failed. */
  | 'constraint'
  /** The file is damaged, or lost its content (empty or not SQLite) where backups show there was a bus. */
  | 'corrupt'
  /** The file or directory cannot be written (a read-only file system, or SQLite opened it read-only). */
  | 'readonly'
  /** The file cannot be opened (missing directory, permissions). */
  | 'cantopen'
  /** The disk (or the user's quota) is full. */
  | 'full'
  /** A file the database's processes share was deleted or replaced while this process had it open. */
  | 'replaced'
  /** SQL or API misuse: syntax errors, unknown tables or columns. */
  | 'sql'
  /** The values given do not fit the statement's parameters (missing, unknown, too many, or a value SQLite cannot store). */
  | 'bind'
  /** An integer a JS number cannot hold exactly (beyond ±(2^53-1)) was read, or a bigint beyond 64 bits was bound. */
  | 'integer_range'
  /** prepare() was given no statement, or more than one (exec() runs several). */
  | 'statement_count'
  /** A statement was used after finalize(), or a connection after close(). */
  | 'closed'
  /** The driver cannot run on this Node (e.g. node:sqlite is missing). */
  | 'driver_unavailable'
  /** The file records the other lock protocol than the chosen driver speaks. */
  | 'protocol_mismatch'
  /** The file is not SQLite, or is SQLite but not an agentbus database. */
  | 'foreign_file'
  /** The database was written by a newer agentbus than this one. */
  | 'schema_newer'
  /** An applied migration's file changed since it was applied. */
  | 'migration_edited'
  /** A migration failed; earlier ones stay applied, this one was rolled back. */
  | 'migration_failed'
  /** This user may not read or write the data directory or a database file (mode, or another user's file). */
  | 'permission'
  /** Another process held the database set-up lock for too long. */
  | 'setup_timeout'
  /** Other processes have the file open, so an operation that needs it to itself (converting, restoring) refused. */
  | 'in_use'
  /** The database a bus is copied into already holds one (convert --to postgres needs an empty database). */
  | 'not_empty'
  /** A lock file names an owner this process cannot judge (an older agentbus, not visible here): refused rather than guessed. */
  | 'lock_owner_unknown'
  /** The database lives on a file system where the lock protocols do not hold (network, VM share, cluster). */
  | 'unsupported_filesystem'
  /** A database server cannot be reached, or did not answer within the call's deadline (the connection is reopened on the next call): retrying later can work. */
  | 'unavailable'
  /** Any other SQLite error. */
  | 'error';

export interface DbErrorCause {
  /** SQLite's extended result code, when the error came from SQLite. */
  readonly sqliteCode?: number;
  /** The underlying error object, when there was one. */
  readonly error?: unknown;
}

/**
 * Marks a DbError made by any copy of this module: the postgres driver's
 * bundle files (scripts/build.js, ON_DEMAND) carry their own copy of the
 * class, and their errors must still be DbErrors to the command's bundle.
 */
const DB_ERROR = Symbol.for('agentbus.DbError');

export class DbError extends Error {
  /** True for an instance of any copy of DbError (DB_ERROR above). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [DB_ERROR]?: unknown })[DB_ERROR] === true;
  }

  override readonly name = 'DbError';
  readonly [DB_ERROR] = true;
  readonly code: DbErrorCode;
  /** SQLite's extended result code, when the error came from SQLite. */
  readonly sqliteCode: number | undefined;

  constructor(code: DbErrorCode, message: string, cause?: DbErrorCause) {
    super(message, cause?.error === undefined ? undefined : { cause: cause.error });
    this.code = code;
    this.sqliteCode = cause?.sqliteCode;
  }
}

/** Maps a SQLite (extended) result code to the storage layer's code. */
export function dbErrorCodeFromSqlite(resultCode: number): DbErrorCode {
  switch (resultCode & 0xff) {
    case 5: // SQLITE_BUSY
      return 'busy';
    case 6: // SQLITE_LOCKED
      return 'locked';
    case 19: // SQLITE_CONSTRAINT
      return 'constraint';
    case 11: // SQLITE_CORRUPT
    case 26: // SQLITE_NOTADB
      return 'corrupt';
    case 8: // SQLITE_READONLY
      // SQLITE_READONLY_DBMOVED: the database file was unlinked or renamed under an open connection.
      return resultCode === 1032 ? 'replaced' : 'readonly';
    case 14: // SQLITE_CANTOPEN
      return 'cantopen';
    case 13: // SQLITE_FULL
      return 'full';
    case 1: // SQLITE_ERROR (syntax, missing table, ...)
    case 21: // SQLITE_MISUSE
    case 20: // SQLITE_MISMATCH
      return 'sql';
    case 25: // SQLITE_RANGE (a parameter index the statement does not have)
      return 'bind';
    default:
      return 'error';
  }
}

export function isDbError(error: unknown, code?: DbErrorCode): error is DbError {
  return error instanceof DbError && (code === undefined || error.code === code);
}
