/** `agentbus doctor`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'doctor',
  describe: `Check the config, data directory permissions, file system and free disk, the database's lock protocol, integrity (the bus tables; every page with --full) and -wal, and stale locks: those of dead processes, and those of processes in another container or sandbox whose lease expired; offers to clear (or revoke) only those (--fix does so without asking). With a database_url, instead of the file checks: the URL, the connection and server version, the schema, the role's privileges and LISTEN/NOTIFY wake-ups, changing nothing. Exits 1 when a problem remains. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--json', kind: 'boolean', description: 'Print one JSON object {ok, checks: [{name, status, message}]} instead of text' },
    { flag: '--fix', kind: 'boolean', description: 'Clear stale locks of dead processes, and revoke expired leases, without asking' },
    { flag: '--full', kind: 'boolean', description: 'Check every page (PRAGMA integrity_check: seconds per hundred MiB) instead of the quick check of the bus tables' },
  ],
  examples: ['doctor', 'doctor --json', 'doctor --full', 'doctor --fix'],
});
