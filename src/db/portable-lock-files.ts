/**
 * The on-disk format of the `portable` lock protocol's files beside a
 * database: their names, the lock table's record layout and the owner text
 * of admin markers. The wasm driver runs the protocol over them; the admin
 * CLI (`doctor`, `convert`) only reads them, without loading any driver. One
 * definition for both, like the file header's application_id.
 */

/** Who holds a record in the lock table or an admin marker. */
export interface LockOwner {
  /** OS process id. */
  readonly pid: number;
  /** Process start time in clock ticks since boot (0 where /proc is absent). */
  readonly startTime: number;
  /** Connection number inside that process, so two connections of one process exclude each other. */
  readonly connection: number;
}

/** The lock table: one record per open connection. */
export function lockTablePath(dbPath: string): string {
  return `${dbPath}-locks`;
}

/** The folder of admin markers (the mutex for rare operations), one empty file per contender. */
export function adminMarkerDir(dbPath: string): string {
  return `${dbPath}-locks.d`;
}

/** Bytes per lock-table record; record i starts at i * RECORD_SIZE. A record whose pid is 0 is free. */
export const RECORD_SIZE = 64;

/** Byte offsets inside a record. */
export const REC = {
  /** u32 LE owner pid. */
  pid: 0,
  /** u32 LE connection number inside the owner. */
  connection: 4,
  /** f64 LE owner start time. */
  startTime: 8,
  dbShared: 16,
  dbReserved: 17,
  dbPending: 18,
  dbExclusive: 19,
  /** First of eight bytes: WAL-index slot i held shared. */
  shmShared: 20,
  /** First of eight bytes: WAL-index slot i held exclusive. */
  shmExclusive: 28,
  /** Set while the owner has the WAL index open (the dead-man switch). */
  shmOpen: 36,
  /** u32 bumped after every push to the WAL index: others pull only when some stamp moved. */
  shmStamp: 40,
} as const;

/** Reads the owner of the record starting at `base`. */
export function readRecordOwner(buf: Buffer, base: number): LockOwner {
  return {
    pid: buf.readUInt32LE(base + REC.pid),
    connection: buf.readUInt32LE(base + REC.connection),
    startTime: buf.readDoubleLE(base + REC.startTime),
  };
}

/** Text form used in admin marker names and diagnostics: `<pid>-<start>-<conn>`. */
export function formatOwner(owner: LockOwner): string {
  return `${owner.pid}-${owner.startTime}-${owner.connection}`;
}

/** Parses `<pid>-<start>-<conn>`; undefined when the text is not one. */
export function parseOwner(text: string): LockOwner | undefined {
  const m = /^(\d+)-(\d+)-(\d+)$/.exec(text);
  if (m === null) return undefined;
  return { pid: Number(m[1]), startTime: Number(m[2]), connection: Number(m[3]) };
}
