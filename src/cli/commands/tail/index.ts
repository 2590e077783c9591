/** The `agentbus tail` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { stopSignal } from '../../stop-signal.js';
import { tailCommand, type TailOptions } from './tail-command.js';

export const run = commandRun<TailOptions>(async (io, args, options) => {
  const stop = stopSignal(io.stdout);
  try {
    return await tailCommand(io, args, options, stop.signal);
  } finally {
    stop.dispose();
  }
});
