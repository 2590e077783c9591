/** The `agentbus reset` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { resetCommand, type ResetOptions } from './reset-command.js';

export const run = commandRun<ResetOptions>((io, _args, options) => resetCommand(io, options));
