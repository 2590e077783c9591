/** The `agentbus restore` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { restoreCommand, type RestoreOptions } from './restore-command.js';

export const run = commandRun<RestoreOptions>((io, args, options) => restoreCommand(io, args, options));
