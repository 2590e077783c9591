/** `agentbus status`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'status',
  describe: `Show live sessions, channels, live file reservations, usage against the budget, the current notice, the embedding backlog, the config path, the data directory, the driver and lock protocol. Never creates the database. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION, { flag: '--json', kind: 'boolean', description: 'Print one JSON object instead of text' }],
  examples: ['status', 'status --json', 'status --config ./agentbus.json'],
});
