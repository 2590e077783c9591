/** The `agentbus memory` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { memoryCommand, type MemoryOptions } from './memory-command.js';

export const run = commandRun<MemoryOptions>((io, args, options) => memoryCommand(io, args, options));
