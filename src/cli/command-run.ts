/**
 * What a command entry (src/cli/commands/<name>/index.ts) exports: the command, with its
 * failure turned into one line on stderr and the exit code scripts rely on.
 * The mapping lives beside the command, not in main.ts, because the build
 * makes each entry a file of its own with its own copy of the error classes.
 */
import { CliError, EXIT_CODES } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** The command itself: its I/O, positional arguments and typed options (`OptionsOf` its spec); returns its exit code, or nothing for 0. */
export type CommandAction<O> = (io: CliIo, args: readonly string[], options: O) => Promise<number | void> | number | void;

/** Runs the command; resolves to its exit code. */
export type CommandRun<O> = (io: CliIo, args: readonly string[], options: O) => Promise<number>;

/** The exit code and line for an expected failure, or undefined for a defect (rethrown: a stack trace is what helps then). */
async function failureOf(error: unknown): Promise<{ code: number; line: string } | undefined> {
  if (error instanceof CliError) return { code: EXIT_CODES[error.code], line: error.message };
  // Loaded only on this path: a command that fails this way has loaded them already.
  const [{ ConfigError }, { DbError }, { systemErrorLine }] = await Promise.all([
    import('../config.js'),
    import('../db/contract/db-error.js'),
    import('./system-error.js'),
  ]);
  if (error instanceof ConfigError || error instanceof DbError) return { code: EXIT_CODES.failed, line: error.message };
  // An errno error (full disk, another user's file) that no layer named: one line saying what to do, not a stack.
  const line = systemErrorLine(error);
  return line === undefined ? undefined : { code: EXIT_CODES.failed, line };
}

/** The entry's run: the action, with an expected failure turned into its line and exit code. */
export function commandRun<O>(action: CommandAction<O>): CommandRun<O> {
  return async (io, args, options) => {
    try {
      return (await action(io, args, options)) ?? 0;
    } catch (error) {
      const failure = await failureOf(error);
      if (failure === undefined) throw error;
      io.stderr.write(`agentbus: ${failure.line}\n`);
      return failure.code;
    }
  };
}
