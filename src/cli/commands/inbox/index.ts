/**
 * The `agentbus inbox` entry (a hook command: a bundle of its own that loads
 * neither the MCP server nor an SQLite engine). It maps no errors: the
 * command itself turns every failure into nothing on stdout and exit 0.
 */
import type { CommandRun } from '../../command-run.js';
import { inboxCommand, type InboxOptions } from './inbox-command.js';

export const run: CommandRun<InboxOptions> = (io, _args, options) => inboxCommand(io, options);
