/**
 * The definition of done for the wasm driver's cross-process locking: real OS
 * processes on one real file, no mocks. A broken lock (or, in WAL mode, a
 * stale or torn WAL index) shows up here as a lost increment, a torn snapshot,
 * a counter going backwards, a failed integrity check or a hung process.
 * The journal mode follows capabilities.wal (rollback journal while it is false).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Connection, Driver } from '../../src/db/driver.js';
import { loadWasmDriver } from '../../drivers/wasm/wasm-driver.js';

const CHILD = fileURLToPath(new URL('./fixtures/stress-child.js', import.meta.url));
const NATIVE_NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
const MIXED_MS = 30_000;
const KILL_ROUNDS = 50;
/** A child that has not exited this long after its deadline is hung. */
const HANG_MS = 30_000;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function driver(): Promise<Driver> {
  const loaded = await loadWasmDriver();
  if (!loaded.ok) throw new Error(`wasm driver unavailable: ${loaded.reason}`);
  return loaded.driver;
}

function createDatabase(d: Driver): { dir: string; dbPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-wasm-stress-'));
  dirs.push(dir);
  const dbPath = join(dir, 'stress.db');
  const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
  // Without SQLite shared memory (capabilities.wal false) SQLite refuses WAL and stays in rollback-journal mode.
  expect(db.prepare('PRAGMA journal_mode=WAL').get()).toEqual({ journal_mode: d.capabilities.wal ? 'wal' : 'delete' });
  db.exec(`
    PRAGMA synchronous=NORMAL;
    CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
    CREATE TABLE pair_a (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
    CREATE TABLE pair_b (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
    CREATE TABLE incs (writer TEXT NOT NULL, seq INTEGER NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (writer, seq));
    INSERT INTO counter VALUES (1, 0);
    INSERT INTO pair_a VALUES (1, 0);
    INSERT INTO pair_b VALUES (1, 0);
  `);
  db.close();
  return { dir, dbPath };
}

interface Child {
  readonly name: string;
  readonly mode: 'writer' | 'reader';
  readonly log: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string;
  stdout: string;
  killed: boolean;
}

function startChild(mode: 'writer' | 'reader', name: string, dbPath: string, dir: string, deadline: number): Child {
  const log = join(dir, `${name}.log`);
  const proc = spawn(process.execPath, [CHILD, mode, dbPath, log, String(deadline), name], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = {
    name,
    mode,
    log,
    proc,
    stderr: '',
    stdout: '',
    killed: false,
    exited: new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal }))),
  };
  proc.stdout?.setEncoding('utf8').on('data', (d: string) => (child.stdout += d));
  proc.stderr?.setEncoding('utf8').on('data', (d: string) => (child.stderr += d));
  return child;
}

/** Waits for every child; a child still running HANG_MS after the deadline is killed and reported. */
async function waitAll(children: readonly Child[], deadline: number): Promise<void> {
  const hung: string[] = [];
  await Promise.all(
    children.map(async (c) => {
      const timer = setTimeout(() => {
        hung.push(c.name);
        c.proc.kill('SIGKILL');
      }, Math.max(0, deadline - Date.now()) + HANG_MS);
      await c.exited;
      clearTimeout(timer);
    }),
  );
  expect(hung, `processes hung (did not exit ${HANG_MS} ms after their deadline): ${hung.join(', ')}`).toEqual([]);
  for (const c of children) {
    if (c.killed) continue;
    const { code, signal } = await c.exited;
    expect({ name: c.name, code, signal }, `${c.name} failed: ${c.stderr}`).toEqual({ name: c.name, code: 0, signal: null });
  }
}

function loggedSeqs(c: Child): number[] {
  if (!existsSync(c.log)) return [];
  return readFileSync(c.log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
}

function readerChecks(c: Child): number {
  if (!existsSync(c.log)) return 0;
  const text = readFileSync(c.log, 'utf8').trim();
  if (text === '') return 0;
  try {
    return (JSON.parse(text) as { checks: number }).checks;
  } catch {
    return 0; // killed mid-write of its progress line
  }
}

/** Every logged (committed, acknowledged) increment must be in the database. */
function verify(db: Connection, writers: readonly Child[]): { logged: number; counter: number; rows: number } {
  expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
  const counter = (db.prepare('SELECT n FROM counter WHERE id = 1').get() as { n: number }).n;
  const rows = (db.prepare('SELECT count(*) AS c FROM incs').get() as { c: number }).c;
  const pair = db.prepare('SELECT (SELECT v FROM pair_a) AS a, (SELECT v FROM pair_b) AS b').get();
  expect(pair).toEqual({ a: counter, b: counter });
  expect(rows, 'every committed transaction both bumps the counter and records one increment').toBe(counter);
  const values = db.prepare('SELECT count(DISTINCT value) AS d, min(value) AS lo, max(value) AS hi FROM incs').get();
  expect(values, 'increments are 1..n, each exactly once (no two writers read the same n)').toEqual(
    counter === 0 ? { d: 0, lo: null, hi: null } : { d: counter, lo: 1, hi: counter },
  );
  const seqsOf = db.prepare('SELECT seq FROM incs WHERE writer = ?');
  let logged = 0;
  for (const w of writers) {
    const present = new Set(seqsOf.all<{ seq: number }>([w.name]).map((r) => r.seq));
    const mine = loggedSeqs(w);
    logged += mine.length;
    const missing = mine.filter((s) => !present.has(s));
    expect(missing, `${w.name}: committed increments missing from the database`).toEqual([]);
  }
  return { logged, counter, rows };
}

/** Reads the file with native node:sqlite (Node >= 22) when this machine has it. */
function nativeView(dbPath: string): { counter: number; rows: number; integrity: string } | undefined {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1], { readOnly: true });
    const out = {
      counter: db.prepare('SELECT n FROM counter').get().n,
      rows: db.prepare('SELECT count(*) AS c FROM incs').get().c,
      integrity: db.prepare('PRAGMA integrity_check').get().integrity_check,
    };
    db.close();
    process.stdout.write(JSON.stringify(out));`;
  for (const node of [process.execPath, NATIVE_NODE]) {
    if (!existsSync(node)) continue;
    const r = spawnSync(node, ['--no-warnings', '-e', script, dbPath], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) return JSON.parse(r.stdout) as { counter: number; rows: number; integrity: string };
  }
  return undefined;
}

function walBytes(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}

describe('wasm driver: one database shared by many OS processes', () => {
  it('8 processes, writers and readers mixed for 30 s: no lost update, every snapshot consistent', async () => {
    const d = await driver();
    const { dir, dbPath } = createDatabase(d);
    const deadline = Date.now() + MIXED_MS;
    const children: Child[] = [];
    for (let i = 0; i < 5; i++) children.push(startChild('writer', `w${i}`, dbPath, dir, deadline));
    for (let i = 0; i < 3; i++) children.push(startChild('reader', `r${i}`, dbPath, dir, deadline));
    let maxWal = 0;
    const sampler = setInterval(() => (maxWal = Math.max(maxWal, walBytes(dbPath))), 250);
    try {
      await waitAll(children, deadline);
    } finally {
      clearInterval(sampler);
    }
    const writers = children.filter((c) => c.mode === 'writer');
    const readers = children.filter((c) => c.mode === 'reader');
    const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
    const { logged, counter } = verify(db, writers);
    db.close();
    expect(counter, 'no process was killed, so the counter equals the increments logged').toBe(logged);
    const checks = readers.reduce((sum, r) => sum + readerChecks(r), 0);
    expect(logged).toBeGreaterThan(0);
    expect(checks).toBeGreaterThan(0);
    const native = nativeView(dbPath);
    if (native !== undefined) expect(native).toEqual({ counter, rows: counter, integrity: 'ok' });
    console.log(
      `mixed: ${logged} increments by 5 writers, ${checks} snapshot checks by 3 readers in ${MIXED_MS / 1000} s; ` +
        `max WAL ${(maxWal / 1048576).toFixed(1)} MiB; native check: ${native === undefined ? 'node:sqlite unavailable' : 'agrees'}`,
    );
  }, 120_000);

  it('50 SIGKILLs at random moments: integrity ok, no committed increment lost, no process hangs', async () => {
    const d = await driver();
    const { dir, dbPath } = createDatabase(d);
    // Generous: the kills pace the phase; the deadline only ends the survivors.
    const deadline = Date.now() + 60_000;
    const all: Child[] = [];
    const live: Child[] = [];
    let serial = 0;
    const spawnOne = (mode: 'writer' | 'reader'): void => {
      const c = startChild(mode, `${mode === 'writer' ? 'kw' : 'kr'}${serial++}`, dbPath, dir, deadline);
      all.push(c);
      live.push(c);
    };
    for (let i = 0; i < 4; i++) spawnOne('writer');
    for (let i = 0; i < 2; i++) spawnOne('reader');
    await new Promise((r) => setTimeout(r, 1500)); // let them get going
    let kills = 0;
    let writerKills = 0;
    for (let round = 0; round < KILL_ROUNDS; round++) {
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
      const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0] as Child;
      if (victim.proc.exitCode !== null) {
        throw new Error(`${victim.name} exited on its own (${victim.proc.exitCode}): ${victim.stderr}`);
      }
      victim.killed = true;
      victim.proc.kill('SIGKILL');
      kills++;
      if (victim.mode === 'writer') writerKills++;
      spawnOne(victim.mode);
    }
    // Survivors stop early: end the phase by killing nobody, just waiting for them with a short deadline.
    for (const c of live) c.proc.kill('SIGTERM');
    for (const c of live) c.killed = true; // SIGTERM ends them without a final report
    await waitAll(all, Date.now());

    const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
    const writers = all.filter((c) => c.mode === 'writer');
    const { logged, counter } = verify(db, writers);
    // The locks of every killed holder are reclaimed: a write goes through at once.
    const t0 = Date.now();
    db.exec('BEGIN IMMEDIATE; UPDATE counter SET n = n WHERE id = 1; COMMIT');
    expect(Date.now() - t0).toBeLessThan(5_000);
    db.close();
    expect(counter).toBeGreaterThanOrEqual(logged);
    // A killed writer may have committed without logging: at most one such increment each (plus SIGTERMed survivors).
    expect(counter - logged).toBeLessThanOrEqual(writerKills + live.length);
    const native = nativeView(dbPath);
    if (native !== undefined) expect(native).toEqual({ counter, rows: counter, integrity: 'ok' });
    const checks = all.filter((c) => c.mode === 'reader').reduce((sum, r) => sum + readerChecks(r), 0);
    console.log(
      `kills: ${kills} SIGKILLs (${writerKills} writers), ${all.length} processes in all; ${logged} logged increments, ` +
        `counter ${counter}; ${checks} snapshot checks; native check: ${native === undefined ? 'node:sqlite unavailable' : 'agrees'}`,
    );
  }, 150_000);
});
