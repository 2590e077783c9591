/** `agentbus backup`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'backup [path]',
  describe: `Write a consistent copy of the database with VACUUM INTO, safe while agents run, and check its integrity before it appears at the path. Default path: <data directory>/backups/agentbus-<time>.db. Refuses an existing file (exit 3) unless --force. Restore one with \`agentbus restore <file>\`. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION, { flag: '-f, --force', kind: 'boolean', description: 'Overwrite an existing file at the path' }],
  examples: ['backup', 'backup ~/agentbus-before-upgrade.db', 'backup /tmp/bus.db --force'],
});
