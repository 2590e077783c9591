/** `agentbus identity`: the registration prompt line for the current directory. */
import type { CliIo } from '../../cli-io.js';
import { identityHookJson, identityLine } from '../../identity-line.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus identity` takes (its spec.ts). */
export type IdentityOptions = OptionsOf<typeof spec.options>;

export function identityCommand(io: CliIo, options: IdentityOptions): number {
  io.stdout.write(`${options.json ? identityHookJson(io.cwd) : identityLine(io.cwd)}\n`);
  return 0;
}
