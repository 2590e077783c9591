/** The `agentbus backup` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { backupCommand, type BackupOptions } from './backup-command.js';
import { commandRun } from '../../command-run.js';

export const run = commandRun<BackupOptions>((io, args, options) => backupCommand(io, args, options));
