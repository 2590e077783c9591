/** The `agentbus doctor` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { doctorCommand, type DoctorOptions } from './doctor-command.js';

export const run = commandRun<DoctorOptions>((io, _args, options) => doctorCommand(io, options));
