/** `agentbus identity`: the registration prompt line for the current directory. */
import type { CliIo } from './cli-io.js';
import { identityLine } from './identity-line.js';

export function identityCommand(io: CliIo): number {
  io.stdout.write(`${identityLine(io.cwd)}\n`);
  return 0;
}
