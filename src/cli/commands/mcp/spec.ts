/** `agentbus mcp`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'mcp',
  describe: `Run the MCP stdio server (what a harness spawns). stdout carries JSON-RPC only. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION],
  examples: ['mcp', 'mcp --config ~/.config/agentbus/config.json'],
});
