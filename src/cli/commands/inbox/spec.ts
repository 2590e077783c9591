/** `agentbus inbox`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'inbox',
  describe: `Print what is unread for the agent of the harness session running this command (its names are found through the process tree: no configuration). For hooks: nothing is printed when nothing is unread; --hook reads the hook's JSON on stdin and answers in that event's format (Claude Code and Codex: UserPromptSubmit, PostToolUse, Stop; Gemini CLI: BeforeAgent, AfterTool, AfterAgent; Cursor: stop). Read-only and always exits 0, so a hook never breaks its harness; problems go to stderr and the log.`,
  options: [
    CONFIG_OPTION,
    { flag: '--hook', kind: 'boolean', description: "Read the hook's JSON from stdin and answer in its event's format" },
    {
      flag: '--wait',
      kind: 'value',
      description: 'With --hook on a stop event: wait up to this many seconds (at most 3600) for a message before letting the agent stop',
      value: 'a number of seconds, e.g. --wait 600',
    },
  ],
  examples: ['inbox', 'inbox --hook', 'inbox --hook --wait 600'],
  hookSafe: true,
});
