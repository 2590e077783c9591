/** The `agentbus restore` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { restoreCommand } from './restore-command.js';

export const run = commandRun((io, args, flags) => restoreCommand(io, args, flags));
