/** `agentbus search`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT, SINCE_OPTION } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'search [...words]',
  describe: `Search messages and memories like the search tool: words (bm25), meaning when an embeddings endpoint is configured, or both fused; best first. Reads only; never registers. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--mode', kind: 'value', description: 'text, semantic (memories only) or both (default: both with an endpoint, else text)', value: 'text, semantic or both' },
    { flag: '--channel', kind: 'value', description: 'Only this channel', value: 'a channel name, e.g. --channel general' },
    { flag: '--sender', kind: 'value', description: 'Only messages from this display name', value: 'a display name, e.g. --sender Alice' },
    SINCE_OPTION,
    { flag: '--until', kind: 'value', description: 'Only messages before this time: an age (2h) or an ISO date and time', value: 'an age or a date, e.g. --until 1d' },
    { flag: '--thread', kind: 'value', description: 'Only this message and the replies under it', value: 'a message seq, e.g. --thread 42' },
    { flag: '--direct', kind: 'boolean', description: 'Only direct messages (a person sees all of them)' },
    { flag: '--count', kind: 'value', description: 'How many results (default 100, at most 1000)', value: 'a count, e.g. --count 20' },
    { flag: '--continuation', kind: 'value', description: 'The next page: the value a previous search printed', value: 'the continuation a search printed' },
    { flag: '--json', kind: 'boolean', description: "Print the search tool's result as one JSON object" },
  ],
  examples: ['search flaky test', 'search "release checklist" --channel memory', 'search tests --direct', 'search deploy --since 1d --json'],
});
