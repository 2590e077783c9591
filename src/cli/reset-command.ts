/**
 * `agentbus reset`: wipes all bus data after a warning about live sessions
 * and a confirmation. Refuses without a terminal unless `--yes` is given, so
 * a script never wipes by accident. The file is never unlinked: running
 * processes keep it open and recover by registering again.
 */
import { liveSessions, resetDatabase } from '../maintenance/reset.js';
import { databaseExists, databaseState, openAdminDatabase } from './admin-database.js';
import { commandConfig, flagSet } from './cli-config.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { confirm } from './confirm.js';

export async function resetCommand(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  const config = commandConfig(io, flags);
  const { path, state } = databaseState(config);
  if (!databaseExists(state)) {
    io.stdout.write(`nothing to reset: there is no database at ${path}\n`);
    return 0;
  }
  const yes = flagSet(flags, 'yes');
  if (!yes && !io.stdinIsTty) {
    throw new CliError('refused', `reset wipes all bus data in ${path} and needs a confirmation: run it on a terminal, or pass --yes in a script; nothing changed`);
  }
  const { db } = await openAdminDatabase(config, io);
  try {
    const live = liveSessions(db, io.clock, 'reset');
    if (live.length > 0) {
      io.stderr.write(
        `warning: ${live.length} live session(s) will lose their registration: ${live.map((s) => `${s.sender} (${s.context})`).join(', ')}; ` +
          'their next call fails with not_registered and registering again recovers\n',
      );
    }
    if (!yes && !(await confirm(io, `Wipe every channel, message, memory and session in ${path}?`))) {
      throw new CliError('refused', 'reset cancelled; nothing changed');
    }
    const report = resetDatabase(db);
    const d = report.deleted;
    io.stdout.write(
      `reset ${path}: deleted ${d.messages} message(s) and memory revision(s), ${d.channels} channel(s), ${d.sessions} session(s), ${d.subscriptions} subscription(s)\n`,
    );
  } finally {
    db.close();
  }
  return 0;
}
