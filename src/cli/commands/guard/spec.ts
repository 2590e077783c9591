/** `agentbus guard`: its usage, help text and options (read on every start: import nothing heavy). */
import { defineCommand } from '../../command-spec.js';
import { CONFIG_OPTION, EXIT_TEXT } from '../../common-options.js';

export const spec = defineCommand({
  usage: 'guard',
  describe: `The git pre-commit check: refuse (exit 3) a commit whose staged files another live agent reserved exclusively, naming holder, pattern and reason; anything broken in agentbus warns and exits 0. --pre-push checks the commits being pushed instead (refs on stdin, as git gives a pre-push hook). --install writes the repository's pre-commit and pre-push hooks. ${EXIT_TEXT}`,
  options: [
    CONFIG_OPTION,
    { flag: '--install', kind: 'boolean', description: 'Write the repository\'s pre-commit and pre-push hooks (refuses to replace a hook agentbus did not write)' },
    { flag: '--pre-push', kind: 'boolean', description: 'Check the commits being pushed (git\'s pre-push refs on stdin) instead of the staged files' },
    { flag: '--remote', kind: 'value', description: 'The remote being pushed to (the pre-push hook passes its $1; the commits checked are those on no remote-tracking branch)', value: 'a remote name, e.g. --remote origin' },
    { flag: '--as', kind: 'value', description: 'The committing agent\'s display name (default: AGENTBUS_AS, else the harness session, else .local/agentbus.json)', value: 'a display name, e.g. --as Sam2' },
  ],
  examples: ['guard --install', 'guard', 'guard --as Sam2', 'guard --pre-push --remote origin < refs'],
});
