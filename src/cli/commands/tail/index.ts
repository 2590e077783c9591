/** The `agentbus tail` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { stopSignal } from '../../stop-signal.js';
import { tailCommand } from './tail-command.js';

export const run = commandRun(async (io, args, flags) => {
  const stop = stopSignal(io.stdout);
  try {
    return await tailCommand(io, args, flags, stop.signal);
  } finally {
    stop.dispose();
  }
});
