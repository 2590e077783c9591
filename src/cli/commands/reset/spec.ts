/** `agentbus reset`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'reset',
  describe: `Wipe all bus data (channels, messages, memories, sessions) in one transaction, after warning about live sessions and asking for confirmation on a terminal. The file is kept; running agents recover by registering again. Without a terminal it refuses (exit 3) unless --yes is given. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION, { flag: '-y, --yes', kind: 'boolean', description: 'Do not ask: wipe (for scripts)' }],
  examples: ['reset', 'reset --yes'],
});
