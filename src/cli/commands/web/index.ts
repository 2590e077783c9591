/** The `agentbus web` entry, loaded by main.ts only when that command runs (the build makes it a file of its own, with the page's files in web-console/ beside it). */
import { fileURLToPath } from 'node:url';
import { commandRun } from '../../command-run.js';
import { stopSignal } from '../../stop-signal.js';
import { webCommand, type WebOptions } from './web-command.js';

export const run = commandRun<WebOptions>(async (io, _args, options) => {
  const stop = stopSignal(io.stdout);
  try {
    return await webCommand(io, options, stop.signal, fileURLToPath(new URL('./web-console/', import.meta.url)));
  } finally {
    stop.dispose();
  }
});
