/** `agentbus identity`: the registration prompt line for the current directory. */
import type { CliIo } from '../../cli-io.js';
import { identityHookJson, identityLine } from '../../identity-line.js';

export function identityCommand(io: CliIo, flags: Record<string, unknown> = {}): number {
  io.stdout.write(`${flags.json === true ? identityHookJson(io.cwd) : identityLine(io.cwd)}\n`);
  return 0;
}
