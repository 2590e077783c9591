/** `agentbus convert`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'convert [url]',
  describe: `Convert the database to the other lock protocol: posix (native driver, node:sqlite) or portable (wasm driver); or, with --to postgres URL, copy the whole bus into an empty PostgreSQL database (the file stays as it is; then set database_url to move agents there). Refuses (exit 3) while any process has the database open; stop every agentbus process first. Checkpoints the WAL, rewrites the header with the target driver and verifies the file with it. ${EXIT_TEXT}`,
  options: [CONFIG_OPTION, { flag: '--to', kind: 'value', description: 'The target: portable or posix (lock protocols), or postgres followed by the URL of an empty database', value: 'portable, posix or postgres, e.g. --to portable' }],
  examples: ['convert --to portable', 'convert --to posix', 'convert --to postgres postgres://agentbus@db.internal:5432/agentbus'],
});
