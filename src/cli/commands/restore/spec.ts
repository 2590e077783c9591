/** `agentbus restore`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'restore [backup]',
  describe: `Put a backup in place of the database: checks the backup's integrity and schema first, refuses (exit 3) while any process has the database open, keeps the current database (with its -wal) in <data directory>/backups/agentbus-<time>-replaced.db, removes the -shm and lock files, then opens the restored file. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION],
  examples: ['restore ~/.local/share/agentbus/backups/agentbus-2026-11-30T12-00-00-000Z.db'],
});
