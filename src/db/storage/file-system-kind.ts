/**
 * Which file system a data directory lives on, as far as the OS tells, and
 * whether agentbus may keep its database there.
 *
 * Both lock protocols assume one kernel sees every process using the file:
 * the native driver's POSIX locks and its mmap-ed WAL index (SQLite: "WAL
 * does not work over a network filesystem"; all processes must be on the
 * same host), and the wasm driver's lock table, which needs every pwrite to
 * be seen at once by every other process's pread, and judges owners of
 * another boot by leases that assume one file. On a network file system
 * (NFS, SMB/CIFS, AFS, Ceph, Lustre, ...), a share between a virtual machine
 * and its host (9p, virtiofs, vboxsf, Parallels, VMware, Docker Desktop's
 * file sharing) or a cluster file system on a shared disk (GFS2, OCFS2), two
 * kernels write one file: neither protocol holds, and the database is
 * corrupted sooner or later. Such file systems are refused, with the way
 * out. A FUSE file system of an unknown kind may be a local one (an
 * encrypted folder) or a network one: it is allowed, and `doctor` warns.
 * On systems other than Linux, Node cannot tell the file system reliably
 * (statfs types differ); nothing is refused there.
 */
import { readFileSync, realpathSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DbError } from '../contract/db-error.js';

export type FileSystemVerdict =
  /** A local file system: both protocols hold. */
  | { readonly kind: 'local'; readonly type: string }
  /** Another kernel can write the file: refused. */
  | { readonly kind: 'refused'; readonly type: string; readonly why: string }
  /** Cannot tell local from network (FUSE): allowed, warned about. */
  | { readonly kind: 'warn'; readonly type: string; readonly why: string }
  /** The OS does not tell (not Linux, or statfs failed). */
  | { readonly kind: 'unknown'; readonly why: string };

const NETWORK = 'a network file system';
const VM_SHARE = 'a folder shared between a virtual machine (or WSL) and its host';
const CLUSTER = 'a cluster file system shared by several machines';

/** statfs f_type magic numbers (linux/magic.h and the file systems' sources). */
const REFUSED_MAGIC: ReadonlyMap<number, { readonly type: string; readonly why: string }> = new Map([
  [0x6969, { type: 'nfs', why: NETWORK }],
  [0x517b, { type: 'smb', why: NETWORK }],
  [0xff534d42, { type: 'cifs', why: NETWORK }],
  [0xfe534d42, { type: 'smb2', why: NETWORK }],
  [0x5346414f, { type: 'afs', why: NETWORK }],
  [0x6b414653, { type: 'kafs', why: NETWORK }],
  [0x00c36400, { type: 'ceph', why: NETWORK }],
  [0x73757245, { type: 'coda', why: NETWORK }],
  [0x564c, { type: 'ncp', why: NETWORK }],
  [0x0bd00bd0, { type: 'lustre', why: NETWORK }],
  [0x20030528, { type: 'orangefs', why: NETWORK }],
  [0x47504653, { type: 'gpfs', why: CLUSTER }],
  [0x01161970, { type: 'gfs2', why: CLUSTER }],
  [0x7461636f, { type: 'ocfs2', why: CLUSTER }],
  [0x01021997, { type: '9p', why: VM_SHARE }],
  [0x786f4256, { type: 'vboxsf', why: VM_SHARE }],
  [0x7c7c6673, { type: 'prl_fs', why: VM_SHARE }],
]);

const FUSE_MAGIC = 0x65735546;

/** Mount types (from /proc/self/mountinfo) of FUSE-based and other file systems known to be shared between kernels. */
const REFUSED_MOUNT_TYPES: ReadonlyMap<string, string> = new Map([
  ['virtiofs', VM_SHARE],
  ['fakeowner', VM_SHARE],
  ['fuse.grpcfuse', VM_SHARE],
  ['fuse.vmhgfs-fuse', VM_SHARE],
  ['fuse.sshfs', NETWORK],
  ['fuse.rclone', NETWORK],
  ['fuse.s3fs', NETWORK],
  ['fuse.gcsfuse', NETWORK],
  ['fuse.goofys', NETWORK],
  ['fuse.blobfuse', NETWORK],
  ['fuse.blobfuse2', NETWORK],
  ['fuse.glusterfs', NETWORK],
  ['fuse.ceph-fuse', NETWORK],
  ['fuse.juicefs', NETWORK],
  ['fuse.mfs', NETWORK],
  ['fuse.lizardfs', NETWORK],
  ['fuse.davfs', NETWORK],
  ['fuse.curlftpfs', NETWORK],
  ['fuse.smbnetfs', NETWORK],
]);

/** The verdict for a statfs type and, when known, the mount's type name from mountinfo. */
export function classifyFileSystem(magic: number, mountType: string | undefined): FileSystemVerdict {
  const byMount = mountType === undefined ? undefined : REFUSED_MOUNT_TYPES.get(mountType);
  if (byMount !== undefined && mountType !== undefined) return { kind: 'refused', type: mountType, why: byMount };
  const byMagic = REFUSED_MAGIC.get(magic >>> 0);
  if (byMagic !== undefined) return { kind: 'refused', type: mountType ?? byMagic.type, why: byMagic.why };
  if (magic >>> 0 === FUSE_MAGIC) {
    return {
      kind: 'warn',
      type: mountType ?? 'fuse',
      why: 'a FUSE file system, which may be local or may reach another machine or a virtual machine\'s host; agentbus is safe on it only when every agentbus process runs on this one machine, outside virtual machines',
    };
  }
  return { kind: 'local', type: mountType ?? `0x${(magic >>> 0).toString(16)}` };
}

/** Undoes mountinfo's octal escapes (`\040` for a space). */
function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The type of the mount holding `realPath`, from /proc/self/mountinfo; undefined when it cannot be read. */
function mountTypeOf(realPath: string): string | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  let best: { point: string; type: string } | undefined;
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const point = unescapeMount(line.slice(0, sep).split(' ')[4] ?? '');
    const type = line.slice(sep + 3).split(' ')[0] ?? '';
    const covers = point === '/' || realPath === point || realPath.startsWith(`${point}/`);
    // The last of equally long mount points is the one on top.
    if (covers && (best === undefined || point.length >= best.point.length)) best = { point, type };
  }
  return best?.type;
}

/** The nearest existing directory at or above `path`, resolved. */
function existingRealPath(path: string): string {
  let p = path;
  for (;;) {
    try {
      return realpathSync(p);
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}

/** What the OS says about the file system holding `path` (or its nearest existing parent). */
export function fileSystemOf(path: string): FileSystemVerdict {
  if (process.platform !== 'linux') return { kind: 'unknown', why: `${process.platform} does not report file system types in a form agentbus checks` };
  const real = existingRealPath(path);
  let magic: number;
  try {
    magic = statfsSync(real).type;
  } catch (error) {
    return { kind: 'unknown', why: `statfs ${real} failed (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  return classifyFileSystem(magic, mountTypeOf(real));
}

/** Throws DbError `unsupported_filesystem` when the data directory `dir` is on a refused file system. */
export function refuseUnsupportedFileSystem(dir: string): void {
  const verdict = fileSystemOf(dir);
  if (verdict.kind !== 'refused') return;
  throw new DbError(
    'unsupported_filesystem',
    `the data directory ${dir} is on ${verdict.why} (${verdict.type}), where two machines or kernels can write the database at once and neither SQLite's locks nor agentbus's hold: it would be corrupted. Set AGENTBUS_DATA_DIR (or data_directory in the config) to a directory on a local disk of the machine where the agents run, e.g. ~/.local/share/agentbus`,
  );
}
