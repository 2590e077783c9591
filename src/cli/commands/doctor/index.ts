/** The `agentbus doctor` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { doctorCommand } from './doctor-command.js';

export const run = commandRun((io, _args, flags) => doctorCommand(io, flags));
