/** The name a person acts as (`agentbus post`, `agentbus web`) when no --as is given. */
import { userInfo } from 'node:os';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';

/** The name a person posts as without --as: the OS user name. */
export function humanName(io: CliIo): string {
  const fromEnv = io.env.USER ?? io.env.USERNAME ?? io.env.LOGNAME;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    return userInfo().username;
  } catch {
    throw new CliError('usage', 'no user name to post as (USER is unset); give one with --as NAME');
  }
}
