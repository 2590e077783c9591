/**
 * The wasm file layer holds a WAL frame header back for one call, to write
 * it together with its page. These cases drive the file layer's state
 * (NodeFsVfs) on real files: the pair lands as written, and a header that
 * cannot be written is reported, also when the call that wrote it was
 * xShmBarrier, which has no way to return a code.
 */
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeFsVfs, type OpenFile } from '../../drivers/wasm/node-fs-vfs.js';
import { liveness } from '../../drivers/wasm/owner-liveness.js';
import { SQLITE_IOERR_WRITE, SQLITE_OK } from '../../drivers/wasm/sqlite-codes.js';
import { tempDir } from '../support/test-driver.js';

const OPEN_WAL = 0x80000;
const HEADER = 24;

const fds: number[] = [];
afterEach(() => {
  for (const fd of fds.splice(0)) closeSync(fd);
});

/** A -wal file of a database in a fresh folder, opened with `mode` ('r+' or 'r'), as the file layer's open would record it. */
function walFile(mode: 'r+' | 'r'): { dbPath: string; path: string; file: OpenFile } {
  const dbPath = join(tempDir(), 'held.db');
  const path = `${dbPath}-wal`;
  writeFileSync(path, Buffer.alloc(0));
  const fd = openSync(path, mode);
  fds.push(fd);
  return { dbPath, path, file: { fd, path, flags: OPEN_WAL, deleteOnClose: false, dbPath, generation: liveness.nextGeneration() } };
}

function bytes(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}

describe('a held-back WAL frame header', () => {
  it('goes out with the page written right after it, and on its own before any other call', () => {
    const layer = new NodeFsVfs();
    const { path, file } = walFile('r+');
    layer.add(1, file);
    const other = layer.onFile('other call', SQLITE_IOERR_WRITE, () => SQLITE_OK);

    const heap = new Uint8Array(HEADER + 100);
    heap.set(bytes(HEADER, 0xaa), 0);
    heap.set(bytes(100, 0xbb), HEADER);
    layer.write(file, heap, 0, HEADER, 32);
    expect(readFileSync(path).length, 'the header is held back').toBe(0);
    layer.write(file, heap, HEADER, 100, 32 + HEADER);
    const pair = readFileSync(path);
    expect(pair.subarray(32, 32 + HEADER)).toEqual(Buffer.from(bytes(HEADER, 0xaa)));
    expect(pair.subarray(32 + HEADER)).toEqual(Buffer.from(bytes(100, 0xbb)));

    heap.set(bytes(HEADER, 0xcc), 0);
    layer.write(file, heap, 0, HEADER, 1000);
    expect(other(1)).toBe(SQLITE_OK);
    expect(readFileSync(path).subarray(1000)).toEqual(Buffer.from(bytes(HEADER, 0xcc)));
  });

  it('that cannot be written in xShmBarrier is reported by the next write too (xWrite handles the header itself)', () => {
    const layer = new NodeFsVfs();
    const { dbPath, file } = walFile('r');
    layer.add(1, file);
    const write = layer.onFile('xWrite', SQLITE_IOERR_WRITE, () => SQLITE_OK, false);

    layer.write(file, bytes(HEADER, 0xaa), 0, HEADER, 0);
    layer.enterDeferred();
    expect(write(1)).toBe(SQLITE_IOERR_WRITE);
    expect(write(1)).toBe(SQLITE_OK);
    expect((layer.takeFailure(dbPath, SQLITE_IOERR_WRITE) as NodeJS.ErrnoException | undefined)?.code).toBe('EBADF');
  });

  it('that cannot be written in xShmBarrier is reported by the next call, once, with its reason', () => {
    const layer = new NodeFsVfs();
    // Read-only descriptor: the write fails for real (EBADF).
    const { dbPath, file } = walFile('r');
    layer.add(1, file);
    const next = layer.onFile('next call', SQLITE_IOERR_WRITE, () => SQLITE_OK);

    layer.write(file, bytes(HEADER, 0xaa), 0, HEADER, 0);
    layer.enterDeferred();
    expect(next(1), 'the call after the barrier reports the lost header').toBe(SQLITE_IOERR_WRITE);
    expect(next(1), 'and only that call').toBe(SQLITE_OK);
    const reason = layer.takeFailure(dbPath, SQLITE_IOERR_WRITE);
    expect((reason as NodeJS.ErrnoException | undefined)?.code).toBe('EBADF');
  });

  it('that cannot be written by the next call makes that call fail with a write error', () => {
    const layer = new NodeFsVfs();
    const { dbPath, file } = walFile('r');
    layer.add(1, file);
    let ran = false;
    const next = layer.onFile('next call', SQLITE_IOERR_WRITE, () => {
      ran = true;
      return SQLITE_OK;
    });

    layer.write(file, bytes(HEADER, 0xaa), 0, HEADER, 0);
    expect(next(1)).toBe(SQLITE_IOERR_WRITE);
    expect(ran, 'the call does not do its own work after the header failed').toBe(false);
    expect((layer.takeFailure(dbPath, SQLITE_IOERR_WRITE) as NodeJS.ErrnoException | undefined)?.code).toBe('EBADF');
  });
});
