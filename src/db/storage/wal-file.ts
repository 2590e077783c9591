/**
 * Reading a `-wal` file the way SQLite's recovery does (sqlite.org/fileformat2.html,
 * "Write-Ahead Log File Format"), to tell normal leftovers from damage. Never writes.
 *
 * SQLite trusts the WAL up to the first frame whose salt differs from the
 * header's or whose cumulative checksum fails, and only up to the last commit
 * frame before it. After a crash that is normal: a torn last frame, or frames
 * of an earlier WAL generation (other salts) behind the current one. What is
 * not normal is a frame of the current generation (the header's salts) AFTER
 * the break: frames are written in order, so it was written after the broken
 * one was whole, and the broken frame was damaged later. SQLite silently stops
 * at the break and every commit behind it is lost. A header that is not valid
 * at all makes SQLite ignore the whole file.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const MAGIC_LE = 0x377f0682;
const MAGIC_BE = 0x377f0683;
const FORMAT_VERSION = 3007000;

export type WalReport =
  /** No `-wal`, or an empty one: nothing waits to be checkpointed. */
  | { readonly kind: 'none' }
  /** A valid WAL: `frames` frames SQLite will use, `commits` of them commit frames. */
  | { readonly kind: 'ok'; readonly frames: number; readonly commits: number; readonly pageSize: number }
  /** The header is not a valid WAL header: SQLite ignores the whole file (`bytes` long). */
  | { readonly kind: 'bad_header'; readonly bytes: number }
  /**
   * Frame `brokenFrame` (1-based) breaks the chain, yet `framesAfter` later
   * frames carry this WAL's salts, `commitsAfter` of them commit frames: those
   * commits were written and are now ignored. `usableCommits` commits before the break still count.
   */
  | {
      readonly kind: 'broken';
      readonly brokenFrame: number;
      readonly framesAfter: number;
      readonly commitsAfter: number;
      readonly usableCommits: number;
    };

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), continuing from `s`. */
function checksum(data: Buffer, bigEndian: boolean, s: [number, number]): [number, number] {
  let s0 = s[0];
  let s1 = s[1];
  for (let i = 0; i < data.length; i += 8) {
    const a = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const b = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s0 = (s0 + a + s1) >>> 0;
    s1 = (s1 + b + s0) >>> 0;
  }
  return [s0, s1];
}

function validPageSize(n: number): boolean {
  // 65536 is stored as 1 in the database header but as 65536 here.
  return n >= 512 && n <= 65536 && (n & (n - 1)) === 0;
}

/** Classifies the WAL at `walPath` (see WalReport). Reads it frame by frame; throws only on I/O errors other than ENOENT. */
export function inspectWal(walPath: string): WalReport {
  let fd: number;
  try {
    fd = openSync(walPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { kind: 'none' };
    const header = Buffer.alloc(HEADER_BYTES);
    if (readSync(fd, header, 0, HEADER_BYTES, 0) < HEADER_BYTES) return { kind: 'bad_header', bytes: size };
    const magic = header.readUInt32BE(0);
    const pageSize = header.readUInt32BE(8);
    if ((magic !== MAGIC_LE && magic !== MAGIC_BE) || header.readUInt32BE(4) !== FORMAT_VERSION || !validPageSize(pageSize)) {
      return { kind: 'bad_header', bytes: size };
    }
    const bigEndian = magic === MAGIC_BE;
    let sum = checksum(header.subarray(0, 24), bigEndian, [0, 0]);
    if (sum[0] !== header.readUInt32BE(24) || sum[1] !== header.readUInt32BE(28)) return { kind: 'bad_header', bytes: size };
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);

    const frameBytes = FRAME_HEADER_BYTES + pageSize;
    const frame = Buffer.alloc(frameBytes);
    const total = Math.floor((size - HEADER_BYTES) / frameBytes);
    let frames = 0;
    let commits = 0;
    let lastCommitFrame = 0;
    let broken = 0;
    for (let i = 1; i <= total; i++) {
      const got = readSync(fd, frame, 0, frameBytes, HEADER_BYTES + (i - 1) * frameBytes);
      if (got < frameBytes) break;
      const sameGeneration = frame.readUInt32BE(8) === salt1 && frame.readUInt32BE(12) === salt2;
      if (broken === 0) {
        const next = checksum(frame.subarray(FRAME_HEADER_BYTES), bigEndian, checksum(frame.subarray(0, 8), bigEndian, sum));
        if (sameGeneration && next[0] === frame.readUInt32BE(16) && next[1] === frame.readUInt32BE(20)) {
          sum = next;
          frames = i;
          if (frame.readUInt32BE(4) !== 0) {
            commits++;
            lastCommitFrame = i;
          }
          continue;
        }
        broken = i;
        continue;
      }
      if (sameGeneration) return brokenAfter(fd, frame, frameBytes, total, i, broken, salt1, salt2, commits);
    }
    // Frames after the last commit are a transaction that never committed: normal after a crash.
    return { kind: 'ok', frames: lastCommitFrame, commits, pageSize };
  } finally {
    closeSync(fd);
  }
}

/** Counts this generation's frames and commits from frame `from` on, once one was found after the break. */
function brokenAfter(
  fd: number,
  frame: Buffer,
  frameBytes: number,
  total: number,
  from: number,
  brokenFrame: number,
  salt1: number,
  salt2: number,
  usableCommits: number,
): WalReport {
  let framesAfter = 0;
  let commitsAfter = 0;
  for (let i = from; i <= total; i++) {
    if (i !== from && readSync(fd, frame, 0, frameBytes, HEADER_BYTES + (i - 1) * frameBytes) < frameBytes) break;
    if (frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) continue;
    framesAfter++;
    if (frame.readUInt32BE(4) !== 0) commitsAfter++;
  }
  return { kind: 'broken', brokenFrame, framesAfter, commitsAfter, usableCommits };
}
