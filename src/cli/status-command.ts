/**
 * `agentbus status`: what the bus looks like now, readable at a glance, or as
 * one JSON object with `--json`.
 */
import { dirname } from 'node:path';
import { DIRECT_CHANNEL } from '../bus/direct-addressees.js';
import { liveReservations } from '../bus/reservations-live.js';
import { repositoryLabel } from '../bus/reservations-repository.js';
import { takenKey, takenReservations } from '../bus/reservations-takeover.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { DbError } from '../db/db-error.js';
import { lostDatabaseMessage } from '../db/lost-database.js';
import { embeddingBacklog } from '../embeddings/embedding-pass.js';
import { capacityUsage } from '../maintenance/capacity.js';
import { liveSessions } from '../maintenance/reset.js';
import type { LockProtocol } from '../db/driver.js';
import type { SchemaComparison } from '../db/schema-compatibility.js';
import { olderSchemaMessage } from '../db/schema-messages.js';
import { DRIVER_FOR_PROTOCOL } from '../db/select-driver.js';
import { databaseExists, databaseState, openIfCurrent } from './admin-database.js';
import { commandConfig, flagSet } from './cli-config.js';
import type { CliIo } from './cli-io.js';
import { ago, bar, formatBytes, remaining, table } from './format.js';
import { describeNewDatabaseDriver, newDatabaseDriverFor } from './new-database-driver.js';

/** The `--json` shape of `status`; keys are stable for scripts. */
export interface StatusReport {
  /** The config file read (or that would have been). */
  readonly config_path: string;
  /** False when no file existed at the default path (defaults only). */
  readonly config_file_found: boolean;
  /** Absolute data directory. */
  readonly data_directory: string;
  /** The file; every field but path and exists is null when there is no database yet. */
  readonly database: {
    readonly path: string;
    readonly exists: boolean;
    readonly driver: string | null;
    readonly sqlite_version: string | null;
    readonly lock_protocol: string | null;
    readonly schema_version: number | null;
  };
  /** Before the first `agentbus mcp`: the driver and lock protocol a new database would get here, and why; null once the file exists. */
  readonly new_database: { readonly driver: string | null; readonly lock_protocol: string | null; readonly why: string } | null;
  /** Live pages against the budget; null without a database. percent has one decimal. */
  readonly usage: { readonly used_bytes: number; readonly budget_bytes: number; readonly target_bytes: number; readonly percent: number } | null;
  /** Standing notices (e.g. capacity), oldest kind first. */
  readonly notices: readonly { readonly kind: string; readonly message: string; readonly set_at: string }[];
  /** Semantic search: off without an endpoint; backlog = live memory revisions without a vector. */
  readonly embeddings: { readonly enabled: boolean; readonly model: string | null; readonly backlog: number | null };
  /** Sessions whose holder is live (judged as register judges it, src/bus/session-liveness.ts). */
  readonly sessions: readonly { readonly display_name: string; readonly context: string; readonly heartbeat_at: string }[];
  /** Every channel with its live message and subscriber counts. */
  readonly channels: readonly { readonly name: string; readonly kind: string; readonly messages: number; readonly subscribers: number }[];
  /** Live file reservations, by repository (its git common directory), pattern and holder. */
  readonly reservations: readonly StatusReservation[];
}

/** One live reservation as status shows it. */
export interface StatusReservation {
  readonly repository: string;
  readonly pattern: string;
  readonly display_name: string;
  readonly exclusive: boolean;
  readonly reason: string | null;
  readonly expires_at: string;
  /** Whom it was taken over from (a stalled holder), when it was. */
  readonly taken_from?: string;
  /** When it was taken over. */
  readonly taken_at?: string;
}

function readReservations(db: Database, clock: Clock): StatusReservation[] {
  const taken = takenReservations(db);
  return liveReservations(db, { clock, owner: 'status' }).map((r) => {
    const t = taken.get(takenKey(r.repository, r.holder, r.pattern));
    return {
      repository: r.repository,
      pattern: r.pattern,
      display_name: r.holder,
      exclusive: r.exclusive === 1,
      reason: r.reason,
      expires_at: new Date(r.expires_at).toISOString(),
      ...(t === undefined ? {} : { taken_from: t.from, taken_at: new Date(t.at).toISOString() }),
    };
  });
}

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

/**
 * Every channel with its live message and subscriber counts. The message
 * counts come from the counters migration 0011 keeps by trigger; a file from
 * before it (read, never migrated, by status) is counted row by row. The
 * reserved channel of direct messages is not one of them.
 */
export function channelCounts(db: Database): StatusReport['channels'] {
  const counted = db.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'channel_message_counts'") !== undefined;
  const messages = counted
    ? 'coalesce((SELECT n.live FROM channel_message_counts n WHERE n.channel = c.name), 0)'
    : '(SELECT count(*) FROM messages m WHERE m.channel = c.name AND m.tombstone = 0)';
  return db.all<{ name: string; kind: string; messages: number; subscribers: number }>(
    `SELECT c.name, c.kind, ${messages} AS messages,
       (SELECT count(*) FROM subscriptions s WHERE s.channel = c.name) AS subscribers
     FROM channels c WHERE c.name <> ? ORDER BY c.name`,
    [DIRECT_CHANNEL],
  );
}

/** The report of a database that exists (status, and the web console's state), read in one read transaction. */
export function readReport(db: Database, config: Config, clock: Clock, schemaVersion: number): StatusReport {
  return db.read(() => {
    const usage = capacityUsage(db, config);
    const channels = channelCounts(db);
    const notices = db.all<{ kind: string; message: string; set_at: number }>('SELECT kind, message, set_at FROM notices ORDER BY kind');
    const model = config.embedding_endpoint !== undefined ? (config.embedding_model ?? null) : null;
    return {
      config_path: config.configPath,
      config_file_found: config.configFileFound,
      data_directory: config.data_directory,
      database: {
        path: db.path,
        exists: true,
        driver: db.capabilities.name,
        sqlite_version: db.capabilities.sqliteVersion,
        lock_protocol: db.capabilities.lockProtocol,
        schema_version: schemaVersion,
      },
      new_database: null,
      usage: {
        used_bytes: usage.usedBytes,
        budget_bytes: usage.budgetBytes,
        target_bytes: usage.targetBytes,
        percent: Math.round((usage.usedBytes / usage.budgetBytes) * 1000) / 10,
      },
      notices: notices.map((n) => ({ kind: n.kind, message: n.message, set_at: new Date(n.set_at).toISOString() })),
      embeddings: { enabled: model !== null, model, backlog: model === null ? null : embeddingBacklog(db, model) },
      sessions: liveSessions(db, clock, 'status').map((s) => ({
        display_name: s.sender,
        context: s.context,
        heartbeat_at: new Date(s.heartbeat).toISOString(),
      })),
      channels,
      reservations: readReservations(db, clock),
    };
  });
}

async function emptyReport(config: Config, path: string): Promise<StatusReport> {
  const next = await newDatabaseDriverFor(config);
  return {
    config_path: config.configPath,
    config_file_found: config.configFileFound,
    data_directory: config.data_directory,
    database: { path, exists: false, driver: null, sqlite_version: null, lock_protocol: null, schema_version: null },
    new_database: { driver: next.driver ?? null, lock_protocol: next.lockProtocol ?? null, why: next.why },
    usage: null,
    notices: [],
    embeddings: {
      enabled: config.embedding_endpoint !== undefined,
      model: config.embedding_endpoint !== undefined ? (config.embedding_model ?? null) : null,
      backlog: null,
    },
    sessions: [],
    channels: [],
    reservations: [],
  };
}

/**
 * The report of a database behind this agentbus's schema, which status never
 * upgrades (src/db/schema-compatibility.ts): the file and a notice saying who
 * upgrades it; the bus itself is read by the version that wrote it.
 */
function olderSchemaReport(config: Config, path: string, protocol: LockProtocol, schema: SchemaComparison, now: number): StatusReport {
  return {
    config_path: config.configPath,
    config_file_found: config.configFileFound,
    data_directory: config.data_directory,
    database: { path, exists: true, driver: DRIVER_FOR_PROTOCOL[protocol], sqlite_version: null, lock_protocol: protocol, schema_version: schema.version },
    new_database: null,
    usage: null,
    notices: [{ kind: 'schema_older', message: olderSchemaMessage(schema.version, schema.known, 'status'), set_at: new Date(now).toISOString() }],
    embeddings: { enabled: config.embedding_endpoint !== undefined, model: config.embedding_endpoint !== undefined ? (config.embedding_model ?? null) : null, backlog: null },
    sessions: [],
    channels: [],
    reservations: [],
  };
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

export async function statusCommand(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  const config = commandConfig(io, flags);
  const { path, state } = databaseState(config);
  const now = io.clock.now();
  let report: StatusReport;
  // An emptied file where a bus was is not "no database yet": say what happened and the choices (lost-database.ts).
  const lost = lostDatabaseMessage(path, dirname(path), state);
  if (lost !== undefined) throw new DbError('corrupt', lost);
  if (!databaseExists(state)) {
    report = await emptyReport(config, path);
  } else {
    const opened = await openIfCurrent(config, io);
    if (opened.kind === 'older') {
      report = olderSchemaReport(config, path, opened.protocol, opened.schema, now);
    } else {
      const { db, schemaVersion } = opened.database;
      try {
        report = readReport(db, config, io.clock, schemaVersion);
      } finally {
        db.close();
      }
    }
  }
  io.stdout.write(flagSet(flags, 'json') ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report, now));
  return 0;
}
