/**
 * What a command entry (src/cli/entries/) exports: the command, with its
 * failure turned into one line on stderr and the exit code scripts rely on.
 * The mapping lives beside the command, not in main.ts, because the build
 * makes each entry a file of its own with its own copy of the error classes.
 */
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';

export type CommandAction = (io: CliIo, args: readonly string[], flags: Record<string, unknown>) => Promise<number | void> | number | void;

/** Runs the command; resolves to its exit code. */
export type CommandRun = (io: CliIo, args: readonly string[], flags: Record<string, unknown>) => Promise<number>;

/** The exit code for an expected failure, or undefined for a defect (rethrown: a stack trace is what helps then). */
async function exitCodeOf(error: unknown): Promise<number | undefined> {
  if (error instanceof CliError) return EXIT_CODES[error.code];
  // Loaded only on this path: a command that fails this way has loaded them already.
  const [{ ConfigError }, { DbError }] = await Promise.all([import('../config.js'), import('../db/db-error.js')]);
  if (error instanceof ConfigError || error instanceof DbError) return EXIT_CODES.failed;
  return undefined;
}

export function commandRun(action: CommandAction): CommandRun {
  return async (io, args, flags) => {
    try {
      return (await action(io, args, flags)) ?? 0;
    } catch (error) {
      const code = await exitCodeOf(error);
      if (code === undefined) throw error;
      io.stderr.write(`agentbus: ${(error as Error).message}\n`);
      return code;
    }
  };
}
