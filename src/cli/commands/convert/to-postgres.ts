/**
 * `agentbus convert --to postgres URL`: copies the local bus into an empty
 * PostgreSQL database (src/db/open/copy-to-postgres.ts), offline, and never
 * changes the file. Like the protocol conversion it refuses while any
 * process has the file open, and holds the set-up lock while it reads, so no
 * agentbus process can open the file meanwhile: what is copied is the whole
 * bus, and nothing is written to the file after the copy began.
 */
import { realpathSync, statSync } from 'node:fs';
import { copyToPostgres } from '../../../db/open/copy-to-postgres.js';
import { Database } from '../../../db/contract/database.js';
import { DbError } from '../../../db/contract/db-error.js';
import { connectionUrl, databaseUrlProblem, urlWithoutPassword } from '../../../db/open/postgres-url.js';
import { compareSchema } from '../../../db/open/schema-compatibility.js';
import { DRIVER_FOR_PROTOCOL, loadDriver } from '../../../db/open/select-driver.js';
import { withSetupLock } from '../../../db/open/setup-lock.js';
import { databaseExists, databaseState } from '../../admin-database.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { progressFor } from '../../progress.js';
import { refuseWhileHeld } from '../../refuse-while-held.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';
import * as messages from './messages.js';

const SETUP_WAIT_MS = 10_000;

type ConvertOptions = OptionsOf<typeof spec.options>;

/** The URL to connect with (the configured password file or variable filling in a URL without one). */
function targetUrl(io: CliIo, args: readonly string[], options: ConvertOptions): { url: string; where: string } {
  const given = args[0];
  if (given === undefined) throw new CliError('usage', messages.urlMissing());
  const problem = databaseUrlProblem(given);
  if (problem !== undefined) throw new CliError('usage', messages.badUrl(problem));
  const config = commandConfig(io, options);
  const url = connectionUrl({ database_url: given, databaseUrlKey: 'the URL', database_password_file: config.database_password_file, database_password_env: config.database_password_env });
  return { url, where: urlWithoutPassword(given) };
}

/** Storage refusals that changed nothing exit 3; the rest are failures. */
function asCliError(error: unknown): unknown {
  if (!(error instanceof DbError)) return error;
  if (['busy', 'in_use', 'setup_timeout', 'not_empty'].includes(error.code)) return new CliError('refused', error.message);
  return new CliError('failed', error.message);
}

export async function convertToPostgres(io: CliIo, args: readonly string[], options: ConvertOptions): Promise<number> {
  const { url, where } = targetUrl(io, args, options);
  const config = commandConfig(io, options);
  const { path: given, state } = databaseState(config);
  if (!databaseExists(state)) throw new CliError('failed', messages.noDatabase(given));
  if (state.kind === 'foreign') throw new CliError('failed', messages.foreignFile(state.reason));
  if (state.kind !== 'agentbus') throw new CliError('failed', messages.emptyFile(given));
  const path = realpathSync(given);
  const reader = await loadDriver(DRIVER_FOR_PROTOCOL[state.protocol]);
  if (!reader.ok) throw new CliError('failed', messages.targetDriverMissing(state.protocol, DRIVER_FOR_PROTOCOL[state.protocol], reader.reason));
  // Loaded only here: a SQLite user's commands never load the postgres files.
  const { openPostgresDatabase } = await import('../../../db/open/open-postgres.js');
  // Checked before the target is touched, and again under the set-up lock.
  refuseWhileHeld(io, path, 'convert');
  const progress = progressFor(io);
  try {
    const target = await openPostgresDatabase({ url, now: () => io.clock.now() }).catch((error: unknown) => {
      throw asCliError(error);
    });
    try {
      const result = withSetupLock(path, SETUP_WAIT_MS, () => {
        refuseWhileHeld(io, path, 'convert');
        const source = new Database(reader.driver.open(path, { busyTimeoutMs: 5_000 }));
        try {
          const schema = compareSchema(source);
          if (schema.pending.length > 0) throw new CliError('failed', messages.sourceSchemaOlder(schema.version, schema.known));
          // One blocking call: a long copy shows its steps at once (no timer runs meanwhile).
          const bytes = statSync(path).size;
          return copyToPostgres(source, target.db, (p) => progress.blockingStep(messages.copyStep(p.table, p.copied, p.total), bytes));
        } finally {
          source.close();
        }
      });
      progress.done();
      const rows = result.tables.reduce((n, t) => n + t.rows, 0);
      io.stdout.write(`${messages.copied(path, where, rows, result.lastSeq)}\n`);
      return 0;
    } catch (error) {
      throw asCliError(error);
    } finally {
      target.db.close();
    }
  } finally {
    progress.done();
  }
}
