/**
 * What a CLI command may touch, passed in so tests can drive commands with
 * their own streams, environment and directories.
 */
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../clock.js';

export interface CliIo {
  /** Where answers to confirmation prompts are read from. */
  readonly stdin: Readable;
  /** Results only: what a script pipes on. */
  readonly stdout: Writable;
  /** Warnings, progress and errors. */
  readonly stderr: Writable;
  /** The environment AGENTBUS_* settings are read from. */
  readonly env: NodeJS.ProcessEnv;
  /** The working directory relative paths resolve against. */
  readonly cwd: string;
  /** The user's home directory, for `~/`. */
  readonly homeDir: string;
  /** The time shown and stamped into backups; ms since the epoch. */
  readonly clock: Clock;
  /** True when stdout is a terminal (progress and colour only then). */
  readonly isTty: boolean;
  /** True when stdin is a terminal: only then may a command ask a question. */
  readonly stdinIsTty: boolean;
}
