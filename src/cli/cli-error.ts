/**
 * The one error class of the CLI layer: a message for a person and the exit
 * code scripts rely on (1 failure, 2 usage, 3 refused).
 */
export type CliErrorCode = 'usage' | 'failed' | 'refused';

export const EXIT_CODES: Readonly<Record<CliErrorCode, number>> = { failed: 1, usage: 2, refused: 3 };

export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: CliErrorCode;

  constructor(code: CliErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
