/**
 * A small real file system for tests of a full disk or a read-only one: a
 * tmpfs mounted for the current test (needs root with CAP_SYS_ADMIN, as CI
 * runs) and detached after it. Where mounting is refused the caller skips the
 * test, saying why.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

export interface SmallDisk {
  /** The mount point: an empty directory on the new file system. */
  readonly dir: string;
  /** Fills the file system with a filler file until the kernel says ENOSPC. */
  fill(): void;
  /** Deletes the filler file: the space is back. */
  free(): void;
  /** Remounts the file system read-only. */
  readOnly(): void;
  /** Remounts it read-write again. */
  readWrite(): void;
}

const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) {
    // Lazy: detaches at once even while a process still has a file open there (it is gone when they exit).
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Mounts a tmpfs of `sizeBytes`; returns it, or the reason it cannot be done here (the caller skips with it). */
export function mountSmallDisk(sizeBytes: number): SmallDisk | string {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root (CI runs as root)';
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-disk-'));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs was refused here (${(mount.stderr || mount.error?.message || `exit ${mount.status}`).trim()})`;
  }
  mounted.push(dir);
  const filler = join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 0x5a);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
      // Then the last partial chunk, in 512-byte writes until not even one fits.
      try {
        for (;;) writeSync(fd, chunk, 0, 512);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    readOnly() {
      const r = spawnSync('mount', ['-o', 'remount,ro', dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`remount read-only failed: ${r.stderr}`);
    },
    readWrite() {
      const r = spawnSync('mount', ['-o', 'remount,rw', dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`remount read-write failed: ${r.stderr}`);
    },
  };
}
