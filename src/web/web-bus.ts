/**
 * The bus the web console serves, once there is one. `agentbus web` may start
 * before any agent has made the database (a person opens the console first to
 * watch agents arrive): until the file exists the console only waits, and it
 * never creates the database itself; the first `agentbus mcp` does. How the
 * file is opened is the command's (`OpenBus`), so this file holds no opening
 * rule of its own.
 */
import { basename } from 'node:path';
import type { BusContext } from '../bus/bus-context.js';
import type { ChangeFeed } from '../bus/change-waiter.js';
import { RateLimiter } from '../bus/rate-limiter.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/contract/database.js';
import type { Logger } from '../log.js';
import { readReport } from '../bus/status-report.js';

/** What the console takes of the command's surroundings (a CliIo is one). */
export interface WebIo {
  /** The time source of the writes and of the state's ages. */
  readonly clock: Clock;
  /** The working directory: its basename is the person's default context. */
  readonly cwd: string;
}
import { conversations } from './web-direct.js';

/** What the command's opener returns: the open database and its schema version. */
export interface OpenedBus {
  /** The open database. */
  readonly db: Database;
  /** The schema version it is at (shown by status). */
  readonly schemaVersion: number;
}

/** Opens the existing database; resolves undefined while there is none yet (never creates it). */
export type OpenBus = () => Promise<OpenedBus | undefined>;

/** The opened bus as the console uses it. */
export interface WebBus {
  /** The open database. */
  readonly db: Database;
  /** The context writes as a person start from (asPerson adds the owner). */
  readonly base: Omit<BusContext, 'owner' | 'processIdentity'>;
  /** A context for reads that need one (listMemories, memoryHistory, searchAsReader); it never registers. */
  readonly reader: BusContext;
  /** The highest seq stored (0 when none). */
  lastSeq(): number;
  /** The state the page's header and side bar show. */
  readState(): unknown;
}

/** What a page is told while there is no database yet. */
export const NO_AGENT_YET = 'no agent has started yet: the console goes live when the first agent starts `agentbus mcp` on this data directory';

/** Wraps an opened database for the console; `person` is the name the page's writes are sent as. */
export function webBus(opened: OpenedBus, config: Config, io: WebIo, log: Logger, waiter: ChangeFeed, person: string): WebBus {
  const { db, schemaVersion } = opened;
  // On a 'notify' engine the console hears commits of every machine (none on a bell-file one).
  waiter.listenTo(db.wakeSource);
  const base: Omit<BusContext, 'owner' | 'processIdentity'> = {
    db,
    config,
    clock: io.clock,
    log,
    defaultContext: basename(io.cwd) || 'unknown',
    rateLimiter: new RateLimiter(config),
    announce: (addressees) => waiter.announce(addressees),
  };
  const lastSeq = (): number => db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM messages')?.seq ?? 0;
  return {
    db,
    base,
    reader: { ...base, owner: 'web-console-reader', processIdentity: undefined },
    lastSeq: () => db.read(lastSeq),
    readState: () => {
      const report = readReport(db, config, io.clock, schemaVersion);
      return {
        person,
        sessions: report.sessions,
        channels: report.channels,
        usage: report.usage,
        notices: report.notices,
        reservations: report.reservations,
        conversations: db.read(() => conversations(db)),
        embeddings: report.embeddings,
        last_seq: db.read(lastSeq),
      };
    },
  };
}

/** The bus once it is open, looked for on demand. */
export interface BusHolder {
  /** The open bus, or undefined while there is no database yet. */
  current(): WebBus | undefined;
  /** Looks for the database once (a no-op once open); resolves the bus or undefined. Concurrent looks share one. */
  look(): Promise<WebBus | undefined>;
}

/** A holder over `open`; a failed open is thrown to the looker and tried again at the next look. */
export function busHolder(open: () => Promise<WebBus | undefined>): BusHolder {
  let bus: WebBus | undefined;
  let looking: Promise<WebBus | undefined> | undefined;
  return {
    current: () => bus,
    look() {
      if (bus !== undefined) return Promise.resolve(bus);
      looking ??= open()
        .then((opened) => (bus = opened))
        .finally(() => (looking = undefined));
      return looking;
    },
  };
}
