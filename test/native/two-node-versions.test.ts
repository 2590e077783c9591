/**
 * One machine, two Node versions, one database: a process that can use only
 * the portable protocol (Node 20: wasm only) meets a posix file made by Node
 * 22. It converts the file itself when no process has it open, and refuses
 * naming the holders otherwise; Node 22 processes then follow the file's
 * protocol (auto opens a portable file with wasm). Every case runs real
 * processes of both versions with writers running, and checks that nothing
 * is lost, integrity holds and each process ended on the right driver.
 *
 * The file spawns both Node versions itself, so it runs once, in the native
 * project (whose runner has both drivers to check the file afterwards).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { convertFileProtocol } from '../../src/db/open/convert-protocol.js';
import { readFileState } from '../../src/db/storage/file-header.js';
import { openDatabase } from '../../src/db/open/open-database.js';
import { currentProcess, formatProcessIdentity } from '../../src/db/processes/process-identity.js';
import { loadDriver } from '../../src/db/open/select-driver.js';
import { setupLockDir } from '../../src/db/open/setup-lock.js';
import { fixturePath } from '../support/child-process.js';
import { node22, nodeWasmOnly, type NodeRuntime } from '../support/node-versions.js';
import { tempDir } from '../support/test-driver.js';

type Json = Record<string, any>;

interface Writer {
  readonly child: ChildProcess;
  readonly tag: string;
  readonly runtime: NodeRuntime;
  /** The first JSON line: how it opened, or {error, message}. */
  readonly opened: Promise<Json>;
  /** Resolves at exit with every JSON line printed. */
  readonly done: Promise<{ code: number | null; lines: Json[]; stderr: string }>;
}

const live: Writer[] = [];
// A failed case leaves its writers running: none may outlive it.
afterEach(() => {
  for (const w of live.splice(0)) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});

function startWriter(runtime: NodeRuntime, dir: string, tag: string, env: Record<string, string> = {}): Writer {
  const child = spawn(runtime.bin, [fixturePath('version-writer.js'), dir, tag], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, ...runtime.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lines: Json[] = [];
  let resolveOpened: (line: Json) => void = () => undefined;
  const opened = new Promise<Json>((resolve) => (resolveOpened = resolve));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    let nl: number;
    while ((nl = stdout.indexOf('\n')) >= 0) {
      const line = JSON.parse(stdout.slice(0, nl)) as Json;
      stdout = stdout.slice(nl + 1);
      lines.push(line);
      if (lines.length === 1) resolveOpened(line);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = once(child, 'exit').then(([code]) => {
    resolveOpened({ error: 'exited', message: stderr });
    return { code: code as number | null, lines, stderr };
  });
  const writer = { child, tag, runtime, opened, done };
  live.push(writer);
  return writer;
}

async function stop(dir: string, writers: readonly Writer[]): Promise<Map<string, number>> {
  for (const w of writers) writeFileSync(join(dir, `stop-${w.tag}`), '');
  const wrote = new Map<string, number>();
  for (const w of writers) {
    const timer = setTimeout(() => w.child.kill('SIGKILL'), 60_000);
    const { code, lines, stderr } = await w.done;
    clearTimeout(timer);
    expect(code, `${w.tag} (${w.runtime.label}): ${stderr}`).toBe(0);
    wrote.set(w.tag, lines.at(-1)?.wrote as number);
  }
  return wrote;
}

/** Every row each writer reported, no more, no fewer; integrity ok; read with the file's own driver. */
async function expectIntact(dir: string, wrote: ReadonlyMap<string, number>): Promise<void> {
  const { db } = await openDatabase({ dataDir: dir, driver: 'auto' });
  try {
    const rows = db.all<{ tag: string; n: number; distinct_n: number; top: number }>(
      'SELECT tag, count(*) AS n, count(DISTINCT n) AS distinct_n, max(n) AS top FROM t GROUP BY tag ORDER BY tag',
    );
    const expected = [...wrote.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => (a < b ? -1 : 1));
    expect(rows.map((r) => [r.tag, r.n])).toEqual(expected);
    for (const r of rows) expect([r.distinct_n, r.top]).toEqual([r.n, r.n - 1]);
    expect(db.pragma('integrity_check')).toBe('ok');
  } finally {
    db.close();
  }
}

async function untilWrote(dir: string, tag: string, rows: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { db } = await openDatabase({ dataDir: dir, driver: 'auto' });
    const n = db.get<{ n: number }>('SELECT count(*) AS n FROM t WHERE tag = ?', [tag])?.n ?? 0;
    db.close();
    if (n >= rows) return;
    if (Date.now() > deadline) throw new Error(`${tag} wrote only ${n} rows in 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('one machine, two Node versions', () => {
  const n22 = node22();
  const wasmOnly = nodeWasmOnly();

  it(`Node 22 first (native writers running): ${wasmOnly.label} refuses naming them; once they stop it converts, and Node 22 joins with wasm`, async () => {
    const dir = tempDir();
    const native = [startWriter(n22, dir, 'native-a'), startWriter(n22, dir, 'native-b')];
    for (const w of native) expect(await w.opened).toMatchObject({ driver: 'native', protocol: 'posix', converted: null });
    await untilWrote(dir, 'native-b', 20);

    const refused = startWriter(wasmOnly, dir, 'early');
    const early = await refused.done;
    expect(early.code).toBe(3);
    expect(early.lines[0]).toMatchObject({ error: 'in_use' });
    for (const w of native) expect(early.lines[0]?.message).toContain(`pid ${w.child.pid} (`);
    expect(early.lines[0]?.message).toMatch(/, or run this one with Node >= 22\.13; nothing changed$/);
    // A Node 22 process that asks for wasm is as portable-only, and is told to drop the setting instead.
    const asked = await startWriter(n22, dir, 'asked-wasm', { AGENTBUS_DRIVER: 'wasm' }).done;
    expect(asked.code).toBe(3);
    expect(asked.lines[0]).toMatchObject({ error: 'in_use' });
    expect(asked.lines[0]?.message).toMatch(/, or unset AGENTBUS_DRIVER \(or set it to auto\); nothing changed$/);
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: 'posix' });

    const nativeWrote = await stop(dir, native);
    const converter = startWriter(wasmOnly, dir, 'converter');
    expect(await converter.opened).toMatchObject({ driver: 'wasm', protocol: 'portable', converted: { from: 'posix', to: 'portable' } });
    await untilWrote(dir, 'converter', 20);
    const joined = [startWriter(n22, dir, 'joined-a'), startWriter(n22, dir, 'joined-b')];
    for (const w of joined) expect(await w.opened).toMatchObject({ driver: 'wasm', protocol: 'portable', converted: null });
    await untilWrote(dir, 'joined-b', 20);
    const rest = await stop(dir, [converter, ...joined]);
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: 'portable' });
    await expectIntact(dir, new Map([...nativeWrote, ...rest]));
  });

  it(`${wasmOnly.label} first on a fresh data directory: the file is portable from the start, and Node 22 joins with wasm while it writes`, async () => {
    const dir = tempDir();
    const first = startWriter(wasmOnly, dir, 'first');
    expect(await first.opened).toMatchObject({ driver: 'wasm', protocol: 'portable', converted: null });
    await untilWrote(dir, 'first', 20);
    const joined = [startWriter(n22, dir, 'joined-a'), startWriter(n22, dir, 'joined-b')];
    for (const w of joined) expect(await w.opened).toMatchObject({ driver: 'wasm', protocol: 'portable', converted: null });
    await untilWrote(dir, 'joined-a', 20);
    const wrote = await stop(dir, [first, ...joined]);
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: 'portable' });
    await expectIntact(dir, wrote);
  });

  it('Node 22 processes that read the posix header and then waited for the set-up lock while the file was converted open it with wasm', async () => {
    const dir = tempDir();
    const maker = startWriter(n22, dir, 'maker');
    expect(await maker.opened).toMatchObject({ driver: 'native' });
    await untilWrote(dir, 'maker', 20);
    const made = await stop(dir, [maker]);

    // Hold the set-up lock as a converting process does, so the Node 22 openers read the posix header and wait.
    const path = join(dir, 'agentbus.db');
    mkdirSync(setupLockDir(path));
    writeFileSync(join(setupLockDir(path), 'owner'), formatProcessIdentity(currentProcess()));
    let waiting: Writer[] = [];
    try {
      waiting = [startWriter(n22, dir, 'waiter-a'), startWriter(n22, dir, 'waiter-b')];
      // Time for them to start and reach the lock; had one not yet read the header, it reads the new one: wasm either way.
      await new Promise((r) => setTimeout(r, 3_000));
      for (const w of waiting) expect(w.child.exitCode).toBeNull();
      const wasm = await loadDriver('wasm');
      if (!wasm.ok) throw new Error(wasm.reason);
      convertFileProtocol(path, 'portable', wasm.driver, wasm.driver);
    } finally {
      rmSync(setupLockDir(path), { recursive: true, force: true });
    }
    for (const w of waiting) expect(await w.opened).toMatchObject({ driver: 'wasm', protocol: 'portable', converted: null });
    await untilWrote(dir, 'waiter-b', 20);
    const rest = await stop(dir, waiting);
    await expectIntact(dir, new Map([...made, ...rest]));
  });

  it('both versions at once on a closed posix file: whoever opens first decides, the others follow or refuse, nothing is lost', async () => {
    const dir = tempDir();
    const maker = startWriter(n22, dir, 'maker');
    await maker.opened;
    await untilWrote(dir, 'maker', 10);
    const made = await stop(dir, [maker]);

    const all = [
      startWriter(n22, dir, 'n22-a'),
      startWriter(wasmOnly, dir, 'only-wasm'),
      // Asking for wasm on Node 22 makes a process as portable-only as Node 20 is.
      startWriter(n22, dir, 'n22-wasm', { AGENTBUS_DRIVER: 'wasm' }),
      startWriter(n22, dir, 'n22-b'),
    ];
    const opened = await Promise.all(all.map((w) => w.opened));
    const converted = opened.filter((o) => o.converted !== null && o.converted !== undefined);
    const running = all.filter((_, i) => opened[i]?.error === undefined);
    const refused = all.filter((_, i) => opened[i]?.error !== undefined);
    expect(converted.length).toBeLessThanOrEqual(1);
    if (converted.length === 1) {
      // A portable-only process won: everyone runs on wasm.
      expect(refused).toEqual([]);
      for (const o of opened) expect(o).toMatchObject({ driver: 'wasm', protocol: 'portable' });
    } else {
      // A native process won: it stays posix; the portable-only ones refused, naming a native holder.
      for (const [i, w] of all.entries()) {
        if (w.runtime === n22 && w.tag !== 'n22-wasm') expect(opened[i]).toMatchObject({ driver: 'native', protocol: 'posix' });
        else expect(opened[i]).toMatchObject({ error: 'in_use', message: expect.stringMatching(/pid \d+ \(/) });
      }
      // Each refusal names what else would let that process in: Node 22 for Node 20, the setting for a Node 22 asking for wasm.
      const byTag = new Map(all.map((w, i) => [w.tag, opened[i]]));
      expect(byTag.get('n22-wasm')?.message).toMatch(/or unset AGENTBUS_DRIVER \(or set it to auto\); nothing changed$/);
      expect(byTag.get('only-wasm')?.message).toMatch(/or run this one with Node >= 22\.13; nothing changed$/);
    }
    await untilWrote(dir, running[0]!.tag, 20);
    const rest = await stop(dir, running);
    for (const w of refused) expect((await w.done).code).toBe(3);
    const expectedProtocol = converted.length === 1 ? 'portable' : 'posix';
    expect(readFileState(join(dir, 'agentbus.db'))).toEqual({ kind: 'agentbus', protocol: expectedProtocol });
    await expectIntact(dir, new Map([...made, ...rest]));
  });
});
