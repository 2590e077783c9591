/** The `agentbus status` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { statusCommand, type StatusOptions } from './status-command.js';

export const run = commandRun<StatusOptions>((io, _args, options) => statusCommand(io, options));
