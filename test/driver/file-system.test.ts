/**
 * Which file systems the database may live on (src/db/storage/file-system-kind.ts):
 * the decision for the types the kernel reports, and real statfs of real
 * directories on this machine.
 */
import { describe, expect, it } from 'vitest';
import { classifyFileSystem, fileSystemOf, refuseUnsupportedFileSystem } from '../../src/db/storage/file-system-kind.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

describe('file systems', () => {
  it('refuses network file systems, VM shares and cluster file systems by their statfs type', () => {
    const refused: [number, string][] = [
      [0x6969, 'nfs'],
      [0xff534d42, 'cifs'],
      [0xfe534d42, 'smb2'],
      [0x517b, 'smb'],
      [0x01021997, '9p'],
      [0x00c36400, 'ceph'],
      [0x5346414f, 'afs'],
      [0x786f4256, 'vboxsf'],
      [0x01161970, 'gfs2'],
      [0x7461636f, 'ocfs2'],
    ];
    for (const [magic, type] of refused) expect(classifyFileSystem(magic, undefined), type).toMatchObject({ kind: 'refused', type });
  });

  it('refuses FUSE file systems known to reach another machine or a VM host, warns about other FUSE ones', () => {
    const FUSE = 0x65735546;
    for (const type of ['virtiofs', 'fuse.sshfs', 'fuse.rclone', 'fakeowner']) expect(classifyFileSystem(FUSE, type), type).toMatchObject({ kind: 'refused', type });
    expect(classifyFileSystem(FUSE, 'fuse.gocryptfs')).toMatchObject({ kind: 'warn', type: 'fuse.gocryptfs' });
    expect(classifyFileSystem(FUSE, undefined)).toMatchObject({ kind: 'warn' });
  });

  it('accepts local file systems: ext4, xfs, btrfs, tmpfs, overlay', () => {
    for (const [magic, type] of [
      [0xef53, 'ext4'],
      [0x58465342, 'xfs'],
      [0x9123683e, 'btrfs'],
      [0x01021994, 'tmpfs'],
      [0x794c7630, 'overlay'],
    ] as const) {
      expect(classifyFileSystem(magic, type), type).toEqual({ kind: 'local', type });
    }
  });

  it.skipIf(process.platform !== 'linux')('reads the real file system of a temporary directory and of /dev/shm: local, not refused', async () => {
    const dir = tempDir();
    const verdict = fileSystemOf(dir);
    expect(verdict.kind, JSON.stringify(verdict)).toBe('local');
    expect(() => refuseUnsupportedFileSystem(dir)).not.toThrow();
    expect(fileSystemOf('/dev/shm')).toEqual({ kind: 'local', type: 'tmpfs' });
    // A directory that does not exist yet is judged by its nearest existing parent.
    expect(fileSystemOf(`${dir}/not/yet`)).toEqual(verdict);
    (await openTestDatabase(dir)).db.close();
  });
});
