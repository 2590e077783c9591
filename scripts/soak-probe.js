// Preloaded into each `agentbus mcp` process of the soak benchmark
// (`node --import scripts/soak-probe.js scripts/soak-server.js mcp`): the server is
// the real one; this only watches it. Every SOAK_PROBE_INTERVAL_MS it appends
// one JSON line to SOAK_PROBE_FILE: RSS, V8 heap, external/array buffers, open
// file descriptors, CPU time used so far, live SQLite statements, resident memory by kind of mapping
// (JIT code, anonymous, file-backed; of the anonymous, what glibc malloc holds),
// V8's young and old generations, and, on wasm, the size of the wasm memory.
//
// Live statements: on wasm, statements prepared through the driver and not yet
// finalized (the exec cache of at most 32 is not counted); on native,
// node:sqlite StatementSync objects not yet collected (node:sqlite finalizes a
// statement when it is garbage collected or its database closes).
//
// SOAK_PRAGMA_CACHED=1 replaces Database.pragma() with a version that goes
// through the statement cache, to measure the bus without the known
// statement-per-call leak of pragma() (owned by another change).
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.SOAK_PROBE_FILE;
const intervalMs = Number(process.env.SOAK_PROBE_INTERVAL_MS || 10_000);
const driver = process.env.AGENTBUS_DRIVER;
const dist = new URL('../dist/', import.meta.url);

let live = 0;
let prepared = 0;

if (driver === 'wasm') {
  const { WasmConnection } = await import(new URL('drivers/wasm/wasm-connection.js', dist).href);
  const prepare = WasmConnection.prototype.prepare;
  WasmConnection.prototype.prepare = function countedPrepare(sql) {
    const stmt = prepare.call(this, sql);
    live++;
    prepared++;
    const finalize = stmt.finalize.bind(stmt);
    let done = false;
    stmt.finalize = () => {
      if (!done) live--;
      done = true;
      finalize();
    };
    return stmt;
  };
} else if (driver === 'native') {
  const emit = process.emitWarning;
  process.emitWarning = () => {};
  const { DatabaseSync } = await import('node:sqlite');
  process.emitWarning = emit;
  const collected = new FinalizationRegistry(() => live--);
  const prepare = DatabaseSync.prototype.prepare;
  DatabaseSync.prototype.prepare = function countedPrepare(...args) {
    const stmt = prepare.apply(this, args);
    live++;
    prepared++;
    collected.register(stmt, undefined);
    return stmt;
  };
}

if (process.env.SOAK_PRAGMA_CACHED === '1') {
  const { Database } = await import(new URL('src/db/contract/database.js', dist).href);
  Database.prototype.pragma = function cachedPragma(text) {
    const row = this.get(`PRAGMA ${text}`);
    return row === undefined ? undefined : Object.values(row)[0];
  };
}

let wasmRuntime;
// SOAK_ALLOCATION_PROFILE=<seconds> (diagnosis): V8's sampling heap profiler, counting the
// objects later collected too (garbage is what keeps the collector busy), for that long after
// the first minute; written to SOAK_ALLOCATION_DIR as <driver>-<pid>.heapprofile.
if (Number(process.env.SOAK_ALLOCATION_PROFILE) > 0) {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  setTimeout(async () => {
    await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    setTimeout(async () => {
      const { profile } = await post('HeapProfiler.stopSampling');
      writeFileSync(`${process.env.SOAK_ALLOCATION_DIR}/${driver}-${process.pid}.heapprofile`, JSON.stringify(profile));
    }, Number(process.env.SOAK_ALLOCATION_PROFILE) * 1000).unref();
  }, 60_000).unref();
}

async function wasmFigures() {
  if (driver !== 'wasm') return {};
  wasmRuntime ??= await import(new URL('drivers/wasm/sqlite-runtime.js', dist).href).then((m) => m.loadSqlite3());
  // SQLite's own memory statistics are compiled out of this build; the wasm memory is what it has grown to.
  return { wasmMemory: wasmRuntime.wasm.heap8u().length };
}

/**
 * Resident memory by kind of mapping, from /proc/self/smaps: executable
 * anonymous mappings (JIT code: V8's optimised JS lives in its heap, but
 * compiled WebAssembly does not), other anonymous mappings (V8 heap, malloc,
 * wasm memory) and file-backed ones (the node binary, libraries). Of the
 * anonymous, rssMalloc is glibc malloc's: the main arena ("[heap]", grown by
 * brk) plus the other threads' arenas, which glibc maps at addresses aligned
 * to their 64 MiB maximum (a heuristic: a V8 page could land on such an
 * address, but seldom does). V8 maps the wasm memory at such an address too:
 * the mapping of exactly `wasmBytes` is counted as rssWasm instead.
 */
const ARENA_ALIGN = 64n * 1024n * 1024n;
function rssByMapping(wasmBytes) {
  let text;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return {};
  }
  const out = { rssCode: 0, rssAnon: 0, rssFile: 0, rssMalloc: 0, ...(wasmBytes === undefined ? {} : { rssWasm: 0 }) };
  let kind = 'rssAnon';
  let malloc = false;
  let wasm = false;
  for (const line of text.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      const [, from, to, perms, inode, name] = header;
      kind = inode !== '0' ? 'rssFile' : perms.includes('x') ? 'rssCode' : 'rssAnon';
      if (name.startsWith('[stack') || name.startsWith('[vdso') || name.startsWith('[vvar')) kind = 'rssFile';
      const start = BigInt(`0x${from}`);
      const size = BigInt(`0x${to}`) - start;
      wasm = kind === 'rssAnon' && wasmBytes !== undefined && size === BigInt(wasmBytes);
      malloc = !wasm && kind === 'rssAnon' && (name === '[heap]' || (name === '' && start % ARENA_ALIGN === 0n && size <= ARENA_ALIGN));
      continue;
    }
    if (line.startsWith('Rss:')) {
      const bytes = Number(line.slice(4).trim().split(/\s+/)[0]) * 1024;
      out[kind] += bytes;
      if (malloc) out.rssMalloc += bytes;
      if (wasm) out.rssWasm += bytes;
    }
  }
  return out;
}

/** Committed size of V8's young generation (new space) and of everything older. */
function heapSpaces() {
  let young = 0;
  let old = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name.startsWith('new_')) young += space.space_size;
    else old += space.space_size;
  }
  return { heapYoung: young, heapOld: old };
}

function fdCount() {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

async function sample() {
  const m = process.memoryUsage();
  const cpu = process.cpuUsage();
  const line = {
    t: Date.now(),
    pid: process.pid,
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    fds: fdCount(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    liveStatements: live,
    preparedStatements: prepared,
  };
  const wasmFigure = await wasmFigures();
  Object.assign(line, heapSpaces(), rssByMapping(wasmFigure.wasmMemory), wasmFigure);
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

if (file) {
  const timer = setInterval(() => void sample().catch(() => undefined), intervalMs);
  timer.unref();
  // One sample shortly after start, once the server has opened the database.
  setTimeout(() => void sample().catch(() => undefined), Math.min(2_000, intervalMs)).unref();
}
