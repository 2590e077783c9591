/**
 * The size a -wal file is held to, one figure for both ways it is held:
 * every connection sets it as SQLite's journal_size_limit (the next restart
 * of the WAL cuts the file back to it: without a limit SQLite keeps the file
 * at its largest size for good), and the wasm driver's growth guard asks for
 * a TRUNCATE checkpoint past it (SQLite's automatic checkpoint is PASSIVE and
 * cannot reset the WAL while readers keep old snapshots, so under constant
 * readers the WAL would only grow).
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;
