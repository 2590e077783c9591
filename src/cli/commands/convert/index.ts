/** The `agentbus convert` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { convertCommand, type ConvertOptions } from './convert-command.js';

export const run = commandRun<ConvertOptions>((io, args, options) => convertCommand(io, args, options));
