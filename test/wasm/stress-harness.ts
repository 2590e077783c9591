/**
 * The wasm stress harness: real OS processes (test/fixtures/stress-child.js)
 * on one real database file, and the checks that find a broken lock: a lost
 * increment, a torn snapshot, a failed integrity check, a hung process.
 * Shared by wal-stress.test.ts and pid-namespace.test.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Connection, Driver } from '../../src/db/contract/driver.js';
import { fixturePath } from '../support/child-process.js';
import { tempDir, testDriver } from '../support/test-driver.js';

const CHILD = fixturePath('stress-child.js');
const NATIVE_NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
/** A child that has not exited this long after its deadline is hung. */
const HANG_MS = 30_000;

/** The driver under test (test/wasm runs in the wasm project only). */
export async function driver(): Promise<Driver> {
  return testDriver();
}

export function createDatabase(d: Driver): { dir: string; dbPath: string } {
  const dir = tempDir('agentbus-wasm-stress-');
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

/** What a stress child does (test/fixtures' stress child reads it from its argv). */
export type ChildMode = 'writer' | 'reader' | 'holder' | 'idle';

export interface Child<M extends ChildMode = ChildMode> {
  readonly name: string;
  readonly mode: M;
  readonly log: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string;
  stdout: string;
  killed: boolean;
}

/**
 * Starts a stress child, running until `deadline` (epoch ms) or, as `+<ms>`,
 * for that long once its database is open. `prefix` runs it through another command first
 * (e.g. `unshare ...` or `nsenter ...` to put it in another pid namespace).
 */
export function startChild<M extends ChildMode>(
  mode: M,
  name: string,
  dbPath: string,
  dir: string,
  deadline: number | `+${number}`,
  prefix: readonly string[] = [],
): Child<M> {
  const log = join(dir, `${name}.log`);
  const argv = [process.execPath, CHILD, mode, dbPath, log, String(deadline), name];
  const command = [...prefix, ...argv];
  const proc = spawn(command[0] as string, command.slice(1), {
    stdio: [mode === 'holder' || mode === 'idle' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const child: Child<M> = {
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
export async function waitAll(children: readonly Child[], deadline: number): Promise<void> {
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

export function loggedSeqs(c: Child): number[] {
  if (!existsSync(c.log)) return [];
  return readFileSync(c.log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
}

export function readerChecks(c: Child): number {
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
export function verify(db: Connection, writers: readonly Child[]): { logged: number; counter: number; rows: number } {
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
export function nativeView(dbPath: string): { counter: number; rows: number; integrity: string } | undefined {
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

export function walBytes(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}

