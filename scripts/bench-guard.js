#!/usr/bin/env node
// The commit guard's cost per commit, every available driver in one run, beside a bare `node -e 0`:
//   100 staged paths in a real git repository checked against 1,000 live reservations (10 agents x 100).
//   node -e 0          fresh process, nothing loaded: the floor of any hook
//   agentbus guard     `node bin/agentbus.js guard` as the hook runs it: CLI, two git calls, open, read, match
//   guard module       a fresh process importing only the guard's command module and running it
//                      (what `agentbus guard` costs once the CLI loads its commands lazily)
//   check in process   checkCommit in one warm process: two git calls, opening the database, reading
//                      the live exclusive reservations, matching the 100 paths against them
//   matching alone     findHits: the 100 paths against the 1,000 rows already read
// Medians (p50); the staged paths sit in the reserved directories but hit nothing, so the guard allows
// after checking them all (a refusal costs the same plus its message).
//   npm run bench:guard -- [--runs 21]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { flag } from './bench-args.js';

const RUNS = Number(flag('runs', '21'));
const STAGED = 100;
const HOLDERS = 10;
const PER_HOLDER = 100;

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'agentbus.js');
const { loadDriver } = await import('../dist/src/db/select-driver.js');
const { openDatabase } = await import('../dist/src/db/open-database.js');
const { findRepository } = await import('../dist/src/bus/reservations-repository.js');
const { checkCommit, findHits, stagedPaths } = await import('../dist/src/cli/guard-check.js');
const { liveReservations } = await import('../dist/src/bus/reservations-live.js');
const { loadConfig } = await import('../dist/src/config.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_') && !k.startsWith('AGENTBUS_')));

function timeProcess(file, argv, options) {
  const start = performance.now();
  execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  return performance.now() - start;
}

function gitRepo(dir) {
  const git = (...a) => execFileSync('git', a, { cwd: dir, env: { ...cleanEnv, HOME: dir }, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.email', 'bench@example.invalid');
  git('config', 'user.name', 'bench');
  writeFileSync(join(dir, 'README.md'), '# bench\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'first');
  for (let i = 0; i < STAGED; i++) {
    const h = i % HOLDERS;
    // Beside the reservations (same directories), never covered by one.
    const path = [`src/a${h}/other${i}.ts`, `lib/a${h}/x${i}/y.ts`, `docs/a${h}/z/other${i}.md`, `test/a${h}/x${i}.spec.ts`][i % 4];
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), `${i}\n`);
  }
  git('add', '-A');
}

/** 1,000 live exclusive reservations in `repository`: per agent, literal files, directories and globs in the staged paths' directories. */
async function seed(dataDir, driver, repository) {
  const { db } = await openDatabase({ dataDir, driver });
  const now = Date.now();
  db.transaction(() => {
    for (let h = 0; h < HOLDERS; h++) {
      const holder = `Agent${h + 1}`;
      // A heartbeat an hour ahead keeps the sessions live for the whole bench without a heartbeat process.
      db.run('INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES (?, ?, ?, ?, ?)', [holder, 'bench', `owner-${h}`, now + 3_600_000, now]);
      for (let i = 0; i < PER_HOLDER; i++) {
        const kind = i % 4;
        const pattern =
          kind === 0 ? `src/a${h}/file${i}.ts` : kind === 1 ? `lib/a${h}/dir${i}` : kind === 2 ? `docs/a${h}/**/part${i}.md` : `test/a${h}/*${i}.test.ts`;
        db.run(
          'INSERT INTO reservations (repository, pattern, holder, owner, exclusive, reason, reserved_at, expires_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)',
          [repository, pattern, holder, `owner-${h}`, 'bench', now, now + 3_600_000],
        );
      }
    }
  });
  const n = db.get('SELECT count(*) AS n FROM reservations').n;
  db.close();
  if (n !== HOLDERS * PER_HOLDER) throw new Error(`seeded ${n} reservations`);
}

const drivers = [];
for (const name of ['native', 'wasm']) {
  const r = await loadDriver(name);
  if (r.ok) drivers.push(name);
  else console.log(`(${name} skipped: ${r.reason})`);
}

const base = mkdtempSync(join(tmpdir(), 'agentbus-bench-guard-'));
try {
  const repo = join(base, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const repository = findRepository(repo, { env: cleanEnv }).id;
  const moduleScript = join(base, 'guard-module.mjs');
  writeFileSync(
    moduleScript,
    `const { guardCommand } = await import(${JSON.stringify(new URL('../dist/src/cli/guard-command.js', import.meta.url).href)});
const { systemClock } = await import(${JSON.stringify(new URL('../dist/src/clock.js', import.meta.url).href)});
const code = await guardCommand({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), homeDir: process.env.HOME, clock: systemClock, isTty: false, stdinIsTty: false }, {});
process.exitCode = code;\n`,
  );

  // Every measurement interleaved, run by run, so the baseline and both drivers share the machine's load.
  const setups = [];
  for (const driver of drivers) {
    const dataDir = join(base, `data-${driver}`);
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'config.json'), '{}');
    await seed(dataDir, driver, repository);
    const env = { ...cleanEnv, HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json') };
    const config = loadConfig({ env, homeDir: repo, cwd: repo });
    // The guard must allow (exit 0) and print nothing: a warning would mean it measured a failure path.
    const probe = execFileSync(process.execPath, [bin, 'guard'], { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (probe !== '') throw new Error(`guard printed ${probe}`);
    const verdict = await checkCommit({ cwd: repo, env, config, committer: undefined, now: Date.now() });
    if (verdict.kind !== 'allowed' || verdict.staged !== STAGED) throw new Error(`guard check: ${JSON.stringify(verdict)}`);
    const { db } = await openDatabase({ dataDir, driver });
    const live = db.read(() => liveReservations(db, Date.now(), { repository, exclusiveOnly: true }));
    db.close();
    const paths = stagedPaths(repo, env);
    if (live.length !== HOLDERS * PER_HOLDER || paths.length !== STAGED) throw new Error('bench set-up');
    setups.push({ driver, env, config, live, paths, full: [], module: [], inProcess: [], matching: [] });
  }
  const bare = [];
  for (let i = 0; i < RUNS; i++) {
    bare.push(timeProcess(process.execPath, ['-e', '0'], {}));
    for (const s of setups) {
      s.full.push(timeProcess(process.execPath, [bin, 'guard'], { cwd: repo, env: s.env }));
      s.module.push(timeProcess(process.execPath, [moduleScript], { cwd: repo, env: s.env }));
      let start = performance.now();
      await checkCommit({ cwd: repo, env: s.env, config: s.config, committer: undefined, now: Date.now() });
      s.inProcess.push(performance.now() - start);
      start = performance.now();
      if (findHits(s.paths, s.live, undefined).length !== 0) throw new Error('a staged path hit a reservation');
      s.matching.push(performance.now() - start);
    }
  }
  const nodeMs = median(bare);
  const rows = [['node -e 0', '', nodeMs]];
  for (const s of setups) {
    rows.push(['agentbus guard', s.driver, median(s.full)]);
    rows.push(['guard module', s.driver, median(s.module)]);
    rows.push(['check in process', s.driver, median(s.inProcess)]);
    rows.push(['matching alone', s.driver, median(s.matching)]);
  }

  console.log(`guard: ${STAGED} staged paths vs ${HOLDERS * PER_HOLDER} live exclusive reservations; p50 of ${RUNS} runs; node ${process.version}; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('| what | driver | p50 ms | x node -e 0 |');
  console.log('|---|---|---|---|');
  for (const [what, driver, ms] of rows) console.log(`| ${what} | ${driver} | ${ms.toFixed(1)} | ${(ms / nodeMs).toFixed(2)} |`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
