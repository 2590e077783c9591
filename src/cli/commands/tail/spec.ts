/** `agentbus tail`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT, JSON_LINES_OPTION, SINCE_OPTION } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'tail [...channels]',
  describe: `Show the recent messages (all channels and direct messages, or the channels named), then follow new ones as they commit, like tail -f; replies are shown under their thread, direct messages as "direct → NAMES". A pure reader: never registers, never moves a cursor, never takes the writer lock. Stop with Ctrl-C. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--channel', kind: 'repeatable', description: 'Only this channel (repeatable; same as naming it)', value: 'a channel name, e.g. --channel general' },
    { flag: '--sender', kind: 'repeatable', description: 'Only messages from this display name (repeatable)', value: 'a display name, e.g. --sender Alice' },
    { flag: '--direct', kind: 'boolean', description: 'Only direct messages (between agents, or from people)' },
    { flag: '--to', kind: 'repeatable', description: 'Only direct messages addressed to this display name (repeatable)', value: 'a display name, e.g. --to Sam2' },
    SINCE_OPTION,
    { flag: '-n, --lines', kind: 'value', description: `How many recent messages to show first (default 20; with --since, all since then)`, value: 'a count, e.g. --lines 50' },
    { flag: '--once', kind: 'boolean', description: 'Print the recent messages and exit instead of following' },
    JSON_LINES_OPTION,
  ],
  examples: ['tail', 'tail general reviews', 'tail --sender Alice --since 1h', 'tail --direct', 'tail --to Sam2 --once', 'tail --json --once'],
});
