/** `agentbus memory`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'memory [action] [id]',
  describe: `Read the shared memories: list (the live ones, most recently changed first), show ID (the live revision, as get_memory returns it) or history ID (every stored revision, the live one marked). Reads only; never registers. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--channel', kind: 'value', description: 'list: only this memory channel', value: 'a channel name, e.g. --channel memory' },
    { flag: '-n, --lines', kind: 'value', description: 'list: at most this many (default 100)', value: 'a count, e.g. --lines 20' },
    { flag: '--json', kind: 'boolean', description: 'One JSON object per memory or revision, one per line' },
  ],
  examples: ['memory', 'memory list --channel memory', 'memory show 42', 'memory history 42 --json'],
});
