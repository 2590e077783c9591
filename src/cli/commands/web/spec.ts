/** `agentbus web`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'web',
  describe: `Serve the web console on 127.0.0.1 until Ctrl-C: live sessions, channels with their messages as they commit, threads, memories and their revisions, search, capacity and notices, file reservations; post, reply, edit or delete a memory from the page. Prints the URL to open, with a token made for this run that every request must carry. Everything the page needs is served by agentbus (works offline). ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--port', kind: 'value', description: 'The port on 127.0.0.1 (default 0: any free port)', value: 'a port number, e.g. --port 7420' },
    { flag: '--as', kind: 'value', description: 'The name posts and memory edits are sent as (default: the OS user name)', value: 'a display name, e.g. --as Dana' },
  ],
  examples: ['web', 'web --port 7420', 'web --as Dana'],
});
