/** The `agentbus post` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { postCommand } from './post-command.js';

export const run = commandRun((io, args, flags) => postCommand(io, args, flags));
