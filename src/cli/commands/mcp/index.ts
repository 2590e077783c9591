/** The `agentbus mcp` entry, loaded by main.ts only when that command runs (the build makes it a file of its own). */
import { commandRun } from '../../command-run.js';
import { mcpCommand, type McpOptions } from './mcp-command.js';

export const run = commandRun<McpOptions>((io, _args, options) => mcpCommand(io, options));
