/** The `agentbus reset` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { resetCommand } from './reset-command.js';

export const run = commandRun((io, _args, flags) => resetCommand(io, flags));
