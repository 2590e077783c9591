/**
 * The inbox files: what each `agentbus mcp` process keeps current for its
 * harness, so that a hook can say what is unread without opening the
 * database (no SQLite engine to load, no lock to take: a hook runs after
 * every tool call and must be fast and harmless).
 *
 * One file per server process in `<dataDir>/inbox/`, named
 * `<harness>~<server>.json` after the two process identities (see
 * process-identity.ts), written whole and renamed into place, so a reader
 * sees one version or the other. The server rewrites it after every tool
 * call that can change what is unread (before the result goes out, so a
 * hook that runs after a receive never reports what it delivered), on every
 * commit hint and on a one-second poll; it removes it when it stops. A file
 * whose server is certainly dead is ignored by readers and removed by the
 * next server that starts.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { formatProcessIdentity, judgeProcess, parseProcessIdentity, type ProcessIdentity } from '../db/processes/process-identity.js';

/** The folder inside the data directory. */
export const INBOX_DIR = 'inbox';
/** Separates the harness identity from the server identity in a file name. */
const SEPARATOR = '~';
const SUFFIX = '.json';
/**
 * The `channel` of a name's direct-messages entry, listed before its
 * subscriptions: the bus's reserved channel of direct messages (DIRECT_CHANNEL
 * in src/bus/direct-addressees.ts, which this layer does not import; a test
 * holds them equal). No subscription can have it: channel names start with a
 * letter or digit.
 */
export const DIRECT_ENTRY = '@direct';

const UnreadMessageSchema = v.strictObject({
  seq: v.pipe(v.number(), v.integer()),
  sender: v.string(),
  /** At most a few hundred characters, one line. */
  preview: v.string(),
  /** ISO 8601 UTC. */
  created_at: v.string(),
});

const InboxSubscriptionSchema = v.strictObject({
  channel: v.string(),
  /** Undelivered messages, at most 1000 (see unread_capped). */
  unread: v.pipe(v.number(), v.integer(), v.minValue(0)),
  unread_capped: v.boolean(),
  newest: v.nullable(UnreadMessageSchema),
  /** The delivered but unacknowledged batch: its surviving message count and token. */
  unacked: v.nullable(v.strictObject({ count: v.pipe(v.number(), v.integer(), v.minValue(1)), batch_token: v.string() })),
});

const InboxFileSchema = v.strictObject({
  version: v.literal(1),
  /** The `agentbus mcp` process that writes this file. */
  server: v.string(),
  /** Its harness process. */
  harness: v.string(),
  /** Every name the server holds, with its subscriptions. */
  names: v.array(v.strictObject({ name: v.string(), subscriptions: v.array(InboxSubscriptionSchema) })),
});

export type InboxFile = v.InferOutput<typeof InboxFileSchema>;
export type InboxSubscription = v.InferOutput<typeof InboxSubscriptionSchema>;

/** `<dataDir>/inbox`. */
export function inboxDir(dataDir: string): string {
  return join(dataDir, INBOX_DIR);
}

/** The file name for a server of a harness. */
export function inboxFileName(harness: ProcessIdentity, server: ProcessIdentity): string {
  return `${formatProcessIdentity(harness)}${SEPARATOR}${formatProcessIdentity(server)}${SUFFIX}`;
}

/** Writes `file` whole (0600, folder 0700), replacing the previous version in one rename. */
export function writeInboxFile(dataDir: string, name: string, file: InboxFile): void {
  const dir = inboxDir(dataDir);
  const temporary = join(dir, `.${name}.${process.pid}.tmp`);
  const text = `${JSON.stringify(file)}\n`;
  try {
    writeFileSync(temporary, text, { mode: 0o600 });
  } catch (error) {
    // The folder is made on the first write (and again if someone removed it), not before every write.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { mode: 0o600 });
  }
  renameSync(temporary, join(dir, name));
}

/** Removes a server's file; a missing file is fine. */
export function removeInboxFile(dataDir: string, name: string): void {
  rmSync(join(inboxDir(dataDir), name), { force: true });
}

interface Listed {
  readonly name: string;
  readonly harness: string;
  readonly server: ProcessIdentity;
}

function listInbox(dataDir: string): Listed[] {
  let entries: string[];
  try {
    entries = readdirSync(inboxDir(dataDir));
  } catch {
    return [];
  }
  const listed: Listed[] = [];
  for (const name of entries) {
    if (!name.endsWith(SUFFIX) || name.startsWith('.')) continue;
    const [harness, server, extra] = name.slice(0, -SUFFIX.length).split(SEPARATOR);
    const serverId = server === undefined ? undefined : parseProcessIdentity(server);
    if (harness === undefined || serverId === undefined || extra !== undefined) continue;
    listed.push({ name, harness, server: serverId });
  }
  return listed;
}

/** Why a file was passed over, for the log. */
export interface SkippedInboxFile {
  readonly name: string;
  readonly reason: string;
}

export interface HarnessInbox {
  /** The harness process the files belong to. */
  readonly harness: string;
  /** The valid files of its live (or not certainly dead) servers. */
  readonly files: readonly InboxFile[];
  /** Files of that harness that were ignored, and why. */
  readonly skipped: readonly SkippedInboxFile[];
}

/**
 * The inbox of the nearest of `candidates` (process identities, nearest
 * first) that has a live server's file. Undefined when none has.
 */
export function readHarnessInbox(dataDir: string, candidates: readonly ProcessIdentity[]): HarnessInbox | undefined {
  const listed = listInbox(dataDir);
  if (listed.length === 0) return undefined;
  for (const candidate of candidates) {
    const harness = formatProcessIdentity(candidate);
    const mine = listed.filter((l) => l.harness === harness);
    if (mine.length === 0) continue;
    const files: InboxFile[] = [];
    const skipped: SkippedInboxFile[] = [];
    for (const entry of mine) {
      if (judgeProcess(entry.server) === 'dead') {
        skipped.push({ name: entry.name, reason: 'its server has exited' });
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(join(inboxDir(dataDir), entry.name), 'utf8'));
      } catch (error) {
        // Removed between the listing and the read (the server stopped), or not JSON.
        skipped.push({ name: entry.name, reason: (error as Error).message });
        continue;
      }
      const checked = v.safeParse(InboxFileSchema, parsed);
      if (!checked.success || checked.output.harness !== harness) {
        skipped.push({ name: entry.name, reason: checked.success ? 'names another harness' : `not an inbox file: ${checked.issues[0]?.message ?? ''}` });
        continue;
      }
      files.push(checked.output);
    }
    if (files.length > 0 || skipped.length > 0) return { harness, files, skipped };
  }
  return undefined;
}

/** A temporary file older than this was left by a writer that died between write and rename. */
const ABANDONED_TEMPORARY_MS = 60_000;

/** Removes the files of servers that are certainly dead, and abandoned temporaries; returns how many files. */
export function removeDeadInboxFiles(dataDir: string, nowMs: number): number {
  let removed = 0;
  for (const entry of listInbox(dataDir)) {
    if (judgeProcess(entry.server) !== 'dead') continue;
    removeInboxFile(dataDir, entry.name);
    removed++;
  }
  let names: string[] = [];
  try {
    names = readdirSync(inboxDir(dataDir)).filter((n) => n.startsWith('.') && n.endsWith('.tmp'));
  } catch {
    return removed;
  }
  for (const name of names) {
    const path = join(inboxDir(dataDir), name);
    try {
      if (nowMs - statSync(path).mtimeMs > ABANDONED_TEMPORARY_MS) rmSync(path, { force: true });
    } catch {
      // Renamed or removed meanwhile.
    }
  }
  return removed;
}
