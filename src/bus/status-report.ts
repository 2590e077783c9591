/**
 * What `agentbus status` and the web console show of an existing bus: the
 * file, usage against the budget, notices, live sessions, channels and
 * reservations, read in one read transaction. How it is printed is the
 * command's (src/cli/status-command.ts); the console sends it as JSON.
 */
import type { Clock } from '../clock.js';
import { DIRECT_CHANNEL } from './direct-addressees.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import { embeddingBacklog } from '../embeddings/embedding-pass.js';
import { liveReservations } from '../liveness/reservations-live.js';
import { capacityUsage } from '../maintenance/capacity.js';
import { liveSessions } from '../maintenance/reset.js';
import { takenKey, takenReservations } from './reservations-takeover.js';

/** The `--json` shape of `status`; keys are stable for scripts. */
export interface StatusReport {
  /** The config file read (or that would have been). */
  readonly config_path: string;
  /** False when no file existed at the default path (defaults only). */
  readonly config_file_found: boolean;
  /** Absolute data directory. */
  readonly data_directory: string;
  /** The file, or on a server its URL as path (a password as ***); every field but path and exists is null when there is no database yet. */
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
  /** Sessions whose holder is live (judged as register judges it, src/liveness/session-liveness.ts). */
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

/**
 * Every channel with its live message and subscriber counts. The message
 * counts come from the counters migration 0011 keeps by trigger; a file from
 * before it (read, never migrated, by status) is counted row by row. The
 * reserved channel of direct messages is not one of them.
 */
export function channelCounts(db: Database): StatusReport['channels'] {
  const counted = db.get(db.capabilities.dialect.tableExists, ['channel_message_counts']) !== undefined;
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
        sqlite_version: db.capabilities.sqliteVersion === '' ? null : db.capabilities.sqliteVersion,
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
