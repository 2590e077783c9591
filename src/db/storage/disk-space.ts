/**
 * How much room the file system holding the database has left, from
 * statfs(2). A full disk shows up in many disguises (SQLITE_FULL, ENOSPC, an
 * I/O error while SQLite grows `-shm`, a failed lock-file write), so callers
 * that meet an I/O error ask here whether the disk is the reason.
 */
import { statfsSync } from 'node:fs';

/** Below this many free bytes (or with no free inode) the disk counts as full: one large commit and its WAL frames no longer fit. */
export const DISK_FULL_BYTES = 4 * 1024 * 1024;

export interface DiskSpace {
  /** Bytes this (unprivileged) user may still write. */
  readonly availableBytes: number;
  /** Size of the file system in bytes. */
  readonly totalBytes: number;
  /** Free inodes; 0 means no new file can be created even with bytes free. `undefined` where the file system does not count them. */
  readonly freeInodes: number | undefined;
}

/** The file system holding `path`, or undefined when statfs is unavailable or fails (never throws). */
export function diskSpace(path: string): DiskSpace | undefined {
  try {
    const s = statfsSync(path);
    // Some file systems (e.g. btrfs, overlay on some kernels) report files = 0: inodes are not counted there.
    return { availableBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize, freeInodes: s.files > 0 ? s.ffree : undefined };
  } catch {
    return undefined;
  }
}

/** True when the file system holding `path` is (practically) full. False when it cannot tell. */
export function diskIsFull(path: string): boolean {
  const space = diskSpace(path);
  return space !== undefined && (space.availableBytes < DISK_FULL_BYTES || space.freeInodes === 0);
}
