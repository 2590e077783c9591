/** The `agentbus post` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { postCommand, type PostOptions } from './post-command.js';

export const run = commandRun<PostOptions>((io, args, options) => postCommand(io, args, options));
