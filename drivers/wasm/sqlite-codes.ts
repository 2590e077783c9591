/**
 * SQLite's result codes and open flags (sqlite3.h), the one place the wasm
 * driver declares them: the file layer answers SQLite with them and the connection reads
 * them from the engine. An extended code is its primary code plus a detail
 * in the second byte (`code & 0xff` is the primary).
 */

export const SQLITE_OK = 0;
export const SQLITE_BUSY = 5;
export const SQLITE_IOERR = 10;
export const SQLITE_NOTFOUND = 12;
export const SQLITE_FULL = 13;
export const SQLITE_CANTOPEN = 14;
export const SQLITE_ROW = 100;
export const SQLITE_DONE = 101;

export const SQLITE_IOERR_READ = SQLITE_IOERR | (1 << 8);
export const SQLITE_IOERR_SHORT_READ = SQLITE_IOERR | (2 << 8);
export const SQLITE_IOERR_WRITE = SQLITE_IOERR | (3 << 8);
export const SQLITE_IOERR_FSYNC = SQLITE_IOERR | (4 << 8);
export const SQLITE_IOERR_TRUNCATE = SQLITE_IOERR | (6 << 8);
export const SQLITE_IOERR_FSTAT = SQLITE_IOERR | (7 << 8);
export const SQLITE_IOERR_UNLOCK = SQLITE_IOERR | (8 << 8);
export const SQLITE_IOERR_DELETE = SQLITE_IOERR | (10 << 8);
export const SQLITE_IOERR_ACCESS = SQLITE_IOERR | (13 << 8);
export const SQLITE_IOERR_CHECKRESERVEDLOCK = SQLITE_IOERR | (14 << 8);
export const SQLITE_IOERR_LOCK = SQLITE_IOERR | (15 << 8);
export const SQLITE_IOERR_SHMOPEN = SQLITE_IOERR | (18 << 8);
export const SQLITE_IOERR_SHMLOCK = SQLITE_IOERR | (20 << 8);
export const SQLITE_IOERR_SHMMAP = SQLITE_IOERR | (21 << 8);
export const SQLITE_IOERR_DELETE_NOENT = SQLITE_IOERR | (23 << 8);

/** sqlite3_open_v2's and xOpen's flags (SQLITE_OPEN_*): what a file is opened as. */
export const SQLITE_OPEN_READONLY = 0x1;
export const SQLITE_OPEN_READWRITE = 0x2;
export const SQLITE_OPEN_CREATE = 0x4;
export const SQLITE_OPEN_DELETEONCLOSE = 0x8;
export const SQLITE_OPEN_EXCLUSIVE = 0x10;
export const SQLITE_OPEN_MAIN_DB = 0x100;
export const SQLITE_OPEN_WAL = 0x80000;
/** Extended result codes from the connection. */
export const SQLITE_OPEN_EXRESCODE = 0x02000000;
