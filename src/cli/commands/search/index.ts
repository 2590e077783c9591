/** The `agentbus search` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { searchCommand, type SearchOptions } from './search-command.js';

export const run = commandRun<SearchOptions>((io, args, options) => searchCommand(io, args, options));
