/**
 * Every way the embeddings endpoint (or the key it needs) can fail, as one
 * typed error. Messages name the endpoint's behaviour, never a payload or key,
 * so they are safe to log and to show in a `semantic_unavailable` notice.
 */
export type EmbeddingErrorKind =
  | 'not_configured'
  | 'key'
  | 'unreachable'
  | 'timeout'
  | 'http'
  | 'too_large'
  | 'invalid_response';

export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
  /** What went wrong, coarsely: callers log it and fall back, they never branch further. */
  readonly kind: EmbeddingErrorKind;
  /** The HTTP status for kind `http`. */
  readonly status: number | undefined;

  constructor(kind: EmbeddingErrorKind, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.status = options.status;
  }
}

export function isEmbeddingError(error: unknown): error is EmbeddingError {
  return error instanceof EmbeddingError;
}
