/** `agentbus post`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'post [channel] [text]',
  describe: `Send a message to a channel, or with --to a direct message to one or more agents, as a person, through the same path as the send tool (inspection hook, rate limit, capacity, idempotency), so agents receive it like any other message. Without text (or with -), the text is read from stdin. The name is registered for the send and released after it. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--as', kind: 'value', description: 'The name to post as (default: the OS user name, $USER)', value: 'a name, e.g. --as Dana' },
    { flag: '--to', kind: 'repeatable', description: 'Send a direct message to this display name instead of a channel (repeatable, at most 16); only they receive it', value: 'a display name, e.g. --to Sam2' },
    { flag: '--reply-to', kind: 'value', description: 'The seq of the message this answers (shown under its thread)', value: 'a message seq, e.g. --reply-to 42' },
    { flag: '--idempotency-key', kind: 'value', description: 'Send at most once for this key: a retry with the same key and text returns the first seq', value: 'a key, e.g. --idempotency-key deploy-42' },
    { flag: '--json', kind: 'boolean', description: 'Print {seq, as, channel} ({seq, as, to} with --to; memory_id, revision on a memory channel) as JSON' },
  ],
  examples: ['post general "deploy is frozen until 14:00"', 'post --to Sam2 "run the tests on your branch and tell me"', 'post reviews --reply-to 42 "looks good"', 'git log -1 | agentbus post general', 'post general --as Dana "hello"'],
});
