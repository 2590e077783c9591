/**
 * `agentbus status`: what the bus looks like now, readable at a glance, or as
 * one JSON object with `--json`.
 */
import { dirname } from 'node:path';
import { DIRECT_CHANNEL } from '../../../bus/direct-addressees.js';
import { liveReservations } from '../../../liveness/reservations-live.js';
import { repositoryLabel } from '../../../bus/reservations-repository.js';
import { readReport, type StatusReport, type StatusReservation } from '../../../bus/status-report.js';
import type { Config } from '../../../config.js';
import { DbError } from '../../../db/contract/db-error.js';
import { lostDatabaseMessage } from '../../../db/storage/lost-database.js';
import type { Database } from '../../../db/contract/database.js';
import type { SchemaComparison } from '../../../db/open/schema-compatibility.js';
import { olderSchemaMessage } from '../../../db/open/schema-messages.js';
import { DRIVER_FOR_PROTOCOL } from '../../../db/open/select-driver.js';
import { databaseExists, databaseState, openIfCurrent } from '../../admin-database.js';
import { commandConfig } from '../../cli-config.js';
import type { CliIo } from '../../cli-io.js';
import { ago, bar, formatBytes, remaining, table } from '../../format.js';
import { describeNewDatabaseDriver, newDatabaseDriverFor } from '../../new-database-driver.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus status` takes (its spec.ts). */
export type StatusOptions = OptionsOf<typeof spec.options>;

function formatReservations(reservations: readonly StatusReservation[], now: number): string[] {
  return table(
    reservations.map((r) => [
      repositoryLabel(r.repository),
      r.pattern,
      r.display_name,
      r.exclusive ? 'exclusive' : 'shared',
      `expires ${remaining(now, Date.parse(r.expires_at))}${r.taken_from === undefined ? '' : `, taken over from ${r.taken_from}`}${r.reason === null ? '' : `: ${r.reason}`}`,
    ]),
    '    ',
  );
}

async function emptyReport(config: Config, path: string): Promise<StatusReport> {
  const next = await newDatabaseDriverFor(config);
  return { ...noBusReport(config, path), new_database: { driver: next.driver ?? null, lock_protocol: next.lockProtocol ?? null, why: next.why } };
}

/** Which engine holds a bus whose schema status does not read: the driver and protocol, for the report. */
interface BusEngine {
  /** The driver's name, for display. */
  readonly driver: string;
  /** Its lock protocol, or `server`. */
  readonly protocol: string;
}

/**
 * The report of a database behind this agentbus's schema, which status never
 * upgrades (src/db/open/schema-compatibility.ts): the file and a notice saying who
 * upgrades it; the bus itself is read by the version that wrote it.
 */
function olderSchemaReport(config: Config, path: string, engine: BusEngine, schema: SchemaComparison, now: number): StatusReport {
  return {
    ...noBusReport(config, path),
    database: { path, exists: true, driver: engine.driver, sqlite_version: null, lock_protocol: engine.protocol, schema_version: schema.version },
    notices: [{ kind: 'schema_older', message: olderSchemaMessage(schema.version, schema.known, 'status'), set_at: new Date(now).toISOString() }],
  };
}

/** The parts of a report that are the same whatever the database holds: its place, the configured embeddings, nothing read. */
function noBusReport(config: Config, path: string): StatusReport {
  return {
    config_path: config.configPath,
    config_file_found: config.configFileFound,
    data_directory: config.data_directory,
    database: { path, exists: false, driver: null, sqlite_version: null, lock_protocol: null, schema_version: null },
    new_database: null,
    usage: null,
    notices: [],
    embeddings: { enabled: config.embedding_endpoint !== undefined, model: config.embedding_endpoint !== undefined ? (config.embedding_model ?? null) : null, backlog: null },
    sessions: [],
    channels: [],
    reservations: [],
  };
}

/** The report of the SQLite file in the data directory. */
async function fileReport(config: Config, io: CliIo, now: number): Promise<StatusReport> {
  const { path, state } = databaseState(config);
  // An emptied file where a bus was is not "no database yet": say what happened and the choices (lost-database.ts).
  const lost = lostDatabaseMessage(path, dirname(path), state);
  if (lost !== undefined) throw new DbError('corrupt', lost);
  if (!databaseExists(state)) return emptyReport(config, path);
  const opened = await openIfCurrent(config, io);
  if (opened.kind === 'older') return olderSchemaReport(config, path, { driver: DRIVER_FOR_PROTOCOL[opened.protocol], protocol: opened.protocol }, opened.schema, now);
  return readAndClose(opened.database.db, config, io, opened.database.schemaVersion);
}

/** The report of a bus on the server database_url names, read without creating or upgrading it (server-database.ts). */
async function serverReport(config: Config & { readonly database_url: string }, io: CliIo, now: number): Promise<StatusReport> {
  // Loaded only here: a SQLite user's status never loads the postgres files.
  const { lookAtServer } = await import('../../server-database.js');
  const look = await lookAtServer(config);
  if (look.kind === 'open') return readAndClose(look.db, config, io, look.schemaVersion);
  if (look.kind === 'older') return olderSchemaReport(config, look.place.where, look.place, look.schema, now);
  return { ...noBusReport(config, look.place.where), new_database: { driver: look.place.driver, lock_protocol: look.place.protocol, why: `${config.databaseUrlKey} names this server` } };
}

function readAndClose(db: Database, config: Config, io: CliIo, schemaVersion: number): StatusReport {
  try {
    return readReport(db, config, io.clock, schemaVersion);
  } finally {
    db.close();
  }
}

/** The human-readable form. */
export function formatStatus(report: StatusReport, now: number): string {
  const lines: string[] = [];
  const db = report.database;
  const rows: string[][] = [
    ['config', `${report.config_path}${report.config_file_found ? '' : ' (no file: defaults)'}`],
    ['data directory', report.data_directory],
    ['database', db.exists ? db.path : `${db.path} (none yet: the first \`agentbus mcp\` creates it)`],
  ];
  if (db.exists) {
    const sqlite = db.sqlite_version === null ? '' : ` (SQLite ${db.sqlite_version})`;
    rows.push(['driver', `${db.driver}${sqlite}, lock protocol ${db.lock_protocol}, schema v${db.schema_version}`]);
  } else if (report.new_database !== null) {
    const next = report.new_database;
    rows.push(['driver', `a new database would get ${describeNewDatabaseDriver(next.driver, next.lock_protocol, next.why)}`]);
  }
  if (report.usage !== null) {
    const u = report.usage;
    rows.push([
      'usage',
      `${bar(u.used_bytes / u.budget_bytes)} ${u.percent.toFixed(1)}%  ${formatBytes(u.used_bytes)} of ${formatBytes(u.budget_bytes)} budget (eviction down to ${formatBytes(u.target_bytes)})`,
    ]);
  }
  rows.push(['notice', report.notices.length === 0 ? 'none' : report.notices.map((n) => `${n.kind}: ${n.message}`).join(' | ')]);
  const e = report.embeddings;
  rows.push([
    'embeddings',
    !e.enabled ? 'off (no embedding_endpoint configured)' : `model ${e.model}, backlog ${e.backlog ?? '-'} memory revision(s) without a vector`,
  ]);
  rows.push(['sessions', `${report.sessions.length} live`]);
  const label = (cells: readonly string[]) => `${(cells[0] ?? '').padEnd(16)}${cells[1] ?? ''}`;
  lines.push(...rows.map(label));
  lines.push(
    ...table(
      report.sessions.map((s) => [s.display_name, s.context, `heartbeat ${ago(now, Date.parse(s.heartbeat_at))}`]),
      '    ',
    ),
  );
  lines.push(label(['channels', `${report.channels.length}`]));
  lines.push(
    ...table(
      report.channels.map((c) => [c.name, c.kind, `${c.messages} message(s)`, `${c.subscribers} subscriber(s)`]),
      '    ',
    ),
  );
  lines.push(label(['reservations', `${report.reservations.length} live`]), ...formatReservations(report.reservations, now));
  return `${lines.join('\n')}\n`;
}

export async function statusCommand(io: CliIo, options: StatusOptions): Promise<number> {
  const config = commandConfig(io, options);
  const now = io.clock.now();
  const report = config.database_url === undefined ? await fileReport(config, io, now) : await serverReport({ ...config, database_url: config.database_url }, io, now);
  io.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report, now));
  return 0;
}
