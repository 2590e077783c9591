/**
 * What a CLI command may touch, passed in so tests can drive commands with
 * their own streams, environment and directories.
 */
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../clock.js';

export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly homeDir: string;
  readonly clock: Clock;
  /** True when stdout is a terminal (progress and colour only then). */
  readonly isTty: boolean;
}
