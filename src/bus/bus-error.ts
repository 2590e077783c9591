/**
 * The one error class of the bus layer. Every failure a tool reports is a
 * BusError; the MCP layer turns it into `{code, message, retryable}`.
 */
export type BusErrorCode =
  | 'validation'
  | 'not_registered'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'inspection_rejected'
  | 'inspection_unavailable'
  | 'capacity_exhausted'
  /** The database file is damaged: nothing works until a person restores a backup. */
  | 'database_corrupt'
  /** The disk holding the database is full: nothing can be stored until a person frees space. */
  | 'disk_full'
  /** This user may not write the database's files (another user's files, file modes, a read-only file system). */
  | 'permission_denied'
  /** Another process has the database in a way this one must wait out (the other lock protocol, a long write during set-up): it ends by itself. */
  | 'database_in_use'
  /** The database cannot be opened for another reason a person must fix (a foreign file, a newer schema, a driver that cannot load). */
  | 'storage_unavailable'
  | 'internal';

const RETRYABLE: Readonly<Record<BusErrorCode, boolean>> = {
  validation: false,
  not_registered: false,
  not_found: false,
  conflict: false,
  rate_limited: true,
  inspection_rejected: false,
  inspection_unavailable: true,
  capacity_exhausted: false,
  database_corrupt: false,
  disk_full: false,
  permission_denied: false,
  database_in_use: true,
  storage_unavailable: false,
  internal: true,
};

export interface BusErrorOptions {
  /** The input field at fault, for `validation` (dotted path, e.g. `references.0.value`). */
  readonly field?: string;
  /** Overrides the code's default retryability. */
  readonly retryable?: boolean;
  /** The underlying error. */
  readonly cause?: unknown;
  /** Extra wire fields beside code, message and retryable (e.g. `holders` of a reservation `conflict`). */
  readonly details?: Readonly<Record<string, unknown>>;
}

export class BusError extends Error {
  override readonly name = 'BusError';
  readonly code: BusErrorCode;
  readonly retryable: boolean;
  readonly field: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: BusErrorCode, message: string, options: BusErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE[code];
    this.field = options.field;
    this.details = options.details;
  }

  /** The wire shape: `{code, message, retryable}` and any details. */
  toJSON(): { code: BusErrorCode; message: string; retryable: boolean; [detail: string]: unknown } {
    return { ...this.details, code: this.code, message: this.message, retryable: this.retryable };
  }
}

export function isBusError(error: unknown, code?: BusErrorCode): error is BusError {
  return error instanceof BusError && (code === undefined || error.code === code);
}
