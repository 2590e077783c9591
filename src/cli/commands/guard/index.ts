/**
 * The `agentbus guard` entry (the git pre-commit check, and --install),
 * loaded by main.ts only when that command runs (the build makes it a file of
 * its own). It runs on every commit: it loads no MCP server, no embeddings.
 */
import { commandRun } from '../../command-run.js';
import { guardCommand, type GuardOptions } from './guard-command.js';

export const run = commandRun<GuardOptions>((io, _args, options) => guardCommand(io, options));
