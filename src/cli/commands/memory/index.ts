/** The `agentbus memory` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { memoryCommand } from './memory-command.js';

export const run = commandRun((io, args, flags) => memoryCommand(io, args, flags));
