/** `agentbus identity`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'identity',
  describe: `Print the one-line registration prompt for this directory (for a SessionStart hook), from .local/agentbus.json. Reads neither the config nor the database. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--json', kind: 'boolean', description: 'Print it as SessionStart hook JSON (hookSpecificOutput.additionalContext), the form Gemini CLI passes to the model' },
  ],
  examples: ['identity', 'identity --json'],
});
