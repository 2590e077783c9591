/**
 * `agentbus reset`: wipes all bus data after a warning about live sessions
 * and a confirmation. Refuses without a terminal unless `--yes` is given, so
 * a script never wipes by accident. The file is never unlinked: running
 * processes keep it open and recover by registering again. A database that
 * lost its content (emptied, overwritten: src/db/storage/lost-database.ts), which
 * every other command refuses, is replaced by a new empty bus here, the one
 * way to start empty on purpose; its backups are kept.
 */

/** The database, where one that lost its file content or its schema is replaced by a new empty bus. */
async function openReplacingLost(io: CliIo, config: Config): Promise<Database> {
  const { db } = await openDatabase({
    dataDir: config.data_directory,
    driver: config.driver,
    driverSource: config.driverSource,
    now: () => io.clock.now(),
    replaceLost: true,
  });
  return db;
}

/** Starts a new empty bus in place of a lost database, after the same confirmation as a wipe. */
async function resetLost(io: CliIo, config: Config, path: string, yes: boolean): Promise<number> {
  if (!yes && !(await confirm(io, `${path} lost its content; start a new empty bus there (its backups stay)?`))) {
    throw new CliError('refused', 'reset cancelled; nothing changed');
  }
  (await openReplacingLost(io, config)).close();
  io.stdout.write(`reset ${path}: started a new empty bus in place of the one that lost its content; backups were kept\n`);
  return 0;
}
import { dirname } from 'node:path';
import type { Config } from '../../../config.js';
import type { Database } from '../../../db/contract/database.js';
import { lostDatabaseMessage, openDatabase } from '../../../db/open/open-database.js';
import { urlWithoutPassword } from '../../../db/open/postgres-url.js';
import { liveSessions, resetDatabase } from '../../../maintenance/reset.js';
import { databaseExists, databaseState } from '../../admin-database.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { confirm } from '../../confirm.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus reset` takes (its spec.ts). */
export type ResetOptions = OptionsOf<typeof spec.options>;

export async function resetCommand(io: CliIo, options: ResetOptions): Promise<number> {
  const config = commandConfig(io, options);
  return config.database_url === undefined ? resetFile(io, config, options.yes) : resetServer(io, { ...config, database_url: config.database_url }, options.yes);
}

/** Without --yes only a person at a terminal can confirm: a script is refused before anything is opened. */
function refuseUnconfirmable(io: CliIo, where: string, yes: boolean): void {
  if (!yes && !io.stdinIsTty) {
    throw new CliError('refused', `reset wipes all bus data in ${where} and needs a confirmation: run it on a terminal, or pass --yes in a script; nothing changed`);
  }
}

async function resetFile(io: CliIo, config: Config, yes: boolean): Promise<number> {
  const { path, state } = databaseState(config);
  const lost = lostDatabaseMessage(path, dirname(path), state) !== undefined;
  if (!lost && !databaseExists(state)) {
    io.stdout.write(`nothing to reset: there is no database at ${path}\n`);
    return 0;
  }
  refuseUnconfirmable(io, path, yes);
  if (lost) return resetLost(io, config, path, yes);
  // A file that lost only its schema opens as a new bus here, so the wipe below finds nothing and the bus starts empty.
  return wipe(io, await openReplacingLost(io, config), path, yes);
}

/** The bus on the server database_url names: looked at first (a server without one has nothing to reset, and a refusal changes nothing), then opened and upgraded as a writing command opens it. */
async function resetServer(io: CliIo, config: Config & { readonly database_url: string }, yes: boolean): Promise<number> {
  const where = urlWithoutPassword(config.database_url);
  // Loaded only here: a SQLite user's reset never loads the postgres files.
  const { lookAtServer, upgradedServerDatabase } = await import('../../server-database.js');
  const look = await lookAtServer(config);
  if (look.kind === 'none') {
    io.stdout.write(`nothing to reset: there is no bus on ${where} yet\n`);
    return 0;
  }
  try {
    refuseUnconfirmable(io, where, yes);
  } catch (error) {
    if (look.kind === 'open') look.db.close();
    throw error;
  }
  // The look's connection serves a current schema; an older one is upgraded first, as any writing command does.
  const db = look.kind === 'open' ? look.db : (await upgradedServerDatabase(config, io)).db;
  return wipe(io, db, where, yes);
}

/** Warns about live sessions, asks unless `yes`, wipes and reports; closes `db`. */
async function wipe(io: CliIo, db: Database, where: string, yes: boolean): Promise<number> {
  try {
    const live = liveSessions(db, io.clock, 'reset');
    if (live.length > 0) {
      io.stderr.write(
        `warning: ${live.length} live session(s) will lose their registration: ${live.map((s) => `${s.sender} (${s.context})`).join(', ')}; ` +
          'their next call fails with not_registered and registering again recovers\n',
      );
    }
    if (!yes && !(await confirm(io, `Wipe every channel, message, memory and session in ${where}?`))) {
      throw new CliError('refused', 'reset cancelled; nothing changed');
    }
    const report = resetDatabase(db);
    const d = report.deleted;
    io.stdout.write(
      `reset ${where}: deleted ${d.messages} message(s) and memory revision(s), ${d.channels} channel(s), ${d.sessions} session(s), ${d.subscriptions} subscription(s)\n`,
    );
  } finally {
    db.close();
  }
  return 0;
}
