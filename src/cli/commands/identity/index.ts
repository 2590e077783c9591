/**
 * The `agentbus identity` entry (the SessionStart hook), loaded by main.ts only
 * when that command runs (the build makes it a file of its own). It reads
 * neither the config nor the database.
 */
import { commandRun } from '../../command-run.js';
import { identityCommand, type IdentityOptions } from './identity-command.js';

export const run = commandRun<IdentityOptions>((io, _args, options) => identityCommand(io, options));
