#!/usr/bin/env node
// The commit guard's cost, as the hooks run it, every available driver in one run, beside a bare `node -e 0`:
//   pre-commit   `node bin/agentbus.js guard` in a real git repository with --staged paths staged (default 2,000),
//                against --reservations live exclusive reservations (default 200: 10 agents x 20 literal files,
//                directories, any-depth globs and one-level globs in the staged paths' directories)
//   pre-push     `node bin/agentbus.js guard --pre-push` over --commits commits not yet on the remote (default 100)
// With --against <another agentbus checkout, built> the same pre-commit check of that checkout's bin (e.g. main's) is
// timed in the same runs, interleaved, so the two share the machine's load; it reads the same database.
// Medians (p50); the staged paths sit beside the reservations but hit none, so the guard allows after checking all.
//   npm run bench:guard -- [--runs 15] [--staged 2000] [--reservations 200] [--commits 100] [--against /path/to/main]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { flag } from './bench-args.js';

const RUNS = Number(flag('runs', '15'));
const STAGED = Number(flag('staged', '2000'));
const RESERVATIONS = Number(flag('reservations', '200'));
const COMMITS = Number(flag('commits', '100'));
const AGAINST = flag('against', '');
const HOLDERS = 10;

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'agentbus.js');
const { loadDriver } = await import('../dist/src/db/open/select-driver.js');
const { openDatabase } = await import('../dist/src/db/open/open-database.js');
const { findRepository } = await import('../dist/src/bus/reservations-repository.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_') && !k.startsWith('AGENTBUS_') && !k.startsWith('npm_')));

function timeProcess(file, argv, options) {
  const start = performance.now();
  execFileSync(file, argv, { stdio: ['pipe', 'ignore', 'pipe'], ...options });
  return performance.now() - start;
}

const gitIn = (dir) => (...a) => execFileSync('git', a, { cwd: dir, env: { ...cleanEnv, HOME: dir }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Where the i-th staged or committed path goes: beside the reservations of agent i % HOLDERS, never covered by one. */
const besidePath = (i, tag) => {
  const h = i % HOLDERS;
  return [`src/a${h}/${tag}${i}.ts`, `lib/a${h}/x${i}/${tag}.ts`, `docs/a${h}/z/${tag}${i}.txt`, `test/a${h}/${tag}${i}.spec.ts`][i % 4];
};

function write(dir, path, text) {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
}

/** A repository whose last COMMITS commits (not on its remote) change files beside the reservations, with STAGED more staged. */
function gitRepo(dir, remote) {
  const git = gitIn(dir);
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.invalid');
  git('config', 'user.name', 'bench');
  write(dir, 'README.md', '# bench\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'first');
  mkdirSync(remote);
  gitIn(remote)('init', '-q', '--bare');
  git('remote', 'add', 'origin', remote);
  git('push', '-q', 'origin', 'main');
  for (let c = 0; c < COMMITS; c++) {
    for (let k = 0; k < 5; k++) write(dir, besidePath(c * 5 + k, 'pushed'), `${c}\n`);
    git('add', '-A');
    git('commit', '-q', '-m', `c${c}`);
  }
  for (let i = 0; i < STAGED; i++) write(dir, besidePath(i, 'staged'), `${i}\n`);
  git('add', '-A');
  const tip = git('rev-parse', 'HEAD').trim();
  const base = git('rev-parse', 'origin/main').trim();
  return `refs/heads/main ${tip} refs/heads/main ${base}\n`;
}

/** RESERVATIONS live exclusive reservations in `repository`: per agent, literal files, directories and globs in the staged paths' directories. */
async function seed(dataDir, driver, repository) {
  const { db } = await openDatabase({ dataDir, driver });
  const now = Date.now();
  const per = Math.ceil(RESERVATIONS / HOLDERS);
  db.transaction(() => {
    for (let h = 0; h < HOLDERS; h++) {
      const holder = `Agent${h + 1}`;
      // A session with no process identity and no monotonic reading counts as live at its first sighting, for every reader.
      db.run('INSERT INTO sessions (sender, context, owner, heartbeat, registered_at) VALUES (?, ?, ?, ?, ?)', [holder, 'bench', `owner-${h}`, now + 3_600_000, now]);
      for (let i = 0; i < per && h * per + i < RESERVATIONS; i++) {
        const kind = i % 4;
        const pattern = kind === 0 ? `src/a${h}/file${i}.ts` : kind === 1 ? `lib/a${h}/dir${i}` : kind === 2 ? `docs/a${h}/**/part${i}.md` : `test/a${h}/*${i}.test.ts`;
        db.run('INSERT INTO reservations (repository, pattern, holder, owner, exclusive, reason, reserved_at, expires_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)', [
          repository, pattern, holder, `owner-${h}`, 'bench', now, now + 3_600_000,
        ]);
      }
    }
  });
  const n = db.get('SELECT count(*) AS n FROM reservations').n;
  db.close();
  if (n !== RESERVATIONS) throw new Error(`seeded ${n} reservations`);
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
  const refs = gitRepo(repo, join(base, 'remote.git'));
  const repository = findRepository(repo, { env: cleanEnv }).id;
  const bins = [['this', bin], ...(AGAINST === '' ? [] : [['against', join(AGAINST, 'bin', 'agentbus.js')]])];
  const setups = [];
  for (const driver of drivers) {
    const dataDir = join(base, `data-${driver}`);
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'config.json'), '{}');
    await seed(dataDir, driver, repository);
    // HOME inside the repository: no harness, no identity file; the committer is unknown, so every reservation counts.
    const env = { ...cleanEnv, HOME: repo, AGENTBUS_DATA_DIR: dataDir, AGENTBUS_CONFIG: join(dataDir, 'config.json') };
    // Each check must allow (exit 0) and print nothing: a warning would mean it measured a failure path.
    for (const [, b] of bins) {
      const out = execFileSync(process.execPath, [b, 'guard'], { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      if (out !== '') throw new Error(`guard printed ${out}`);
    }
    const pushProbe = execFileSync(process.execPath, [bin, 'guard', '--pre-push'], { cwd: repo, env, input: refs, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    if (pushProbe !== '') throw new Error(`guard --pre-push printed ${pushProbe}`);
    setups.push({ driver, env, times: new Map() });
  }
  const bare = [];
  const add = (s, key, ms) => s.times.set(key, [...(s.times.get(key) ?? []), ms]);
  for (let i = 0; i < RUNS; i++) {
    bare.push(timeProcess(process.execPath, ['-e', '0'], {}));
    for (const s of setups) {
      for (const [name, b] of bins) add(s, `pre-commit (${name})`, timeProcess(process.execPath, [b, 'guard'], { cwd: repo, env: s.env }));
      add(s, 'pre-push (this)', timeProcess(process.execPath, [bin, 'guard', '--pre-push'], { cwd: repo, env: s.env, input: refs }));
    }
  }
  const nodeMs = median(bare);
  console.log(
    `guard: ${STAGED} staged paths, ${COMMITS} commits to push (${COMMITS * 5} paths), ${RESERVATIONS} live exclusive reservations; p50 of ${RUNS} runs; node ${process.version}; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}${AGAINST === '' ? '' : `; against = ${AGAINST}`}`,
  );
  console.log('| what | driver | p50 ms | x node -e 0 |');
  console.log('|---|---|---|---|');
  console.log(`| node -e 0 | | ${nodeMs.toFixed(1)} | 1.00 |`);
  for (const s of setups) for (const [key, xs] of s.times) console.log(`| ${key} | ${s.driver} | ${median(xs).toFixed(1)} | ${(median(xs) / nodeMs).toFixed(2)} |`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
