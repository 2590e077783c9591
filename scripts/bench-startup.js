#!/usr/bin/env node
// Start-up of agentbus processes, as a harness pays it, each figure a median of
// fresh processes and a ratio to a bare `node -e 0` of the same Node in the same run:
//   spawn -> `initialize` answer of `agentbus mcp` (native on Node 22, wasm on Node 22 and on
//   the machine's Node when that is older), idle RSS after initialize + tools/list;
//   spawn -> exit of the hook commands (`identity`; `inbox --hook` as a PostToolUse hook of this
//   process, which plays the harness of a running `agentbus mcp`: answering, and with nothing new
//   to say) and of `--help`.
// Rounds are interleaved (every case once per round) so load drifts hit all cases alike.
//   npm run bench:startup -- [--runs 9] [--bin path/to/agentbus.js] [--compare other/agentbus.js] [--package] [--realtime] [--cpu]
// --compare adds the same cases for another agentbus (e.g. a checkout of main), interleaved.
// --realtime runs every measured process (bare node included) under `chrt -f 10` (root only):
// on a machine busy with other work this approximates an idle one; say so next to the figures.
// --cpu times the short processes (bare node, hook commands, --help) by the CPU time they used
// (`perf stat -e task-clock`: every thread of the process, whatever else runs on the machine)
// instead of spawn -> exit; the `initialize` cases stay wall time.
// --package also packs the tarball (scripts/pack-install.js), installs it into a temp project with each
// Node's npm, and times a cold and a warm `npx --yes --package <tgz> agentbus mcp` to the
// initialize answer (cold: an empty npm cache).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { npmCommand, packAndInstall } from './pack-install.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const RUNS = Number(option('runs', 9));
const BIN = resolve(option('bin', join(root, 'bin', 'agentbus.js')));
const COMPARE = option('compare', undefined) === undefined ? undefined : resolve(option('compare'));
const PACKAGE = args.includes('--package');
const REALTIME = args.includes('--realtime');
const CPU = args.includes('--cpu');
if (CPU) {
  try {
    execFileSync('perf', ['stat', '-x', ',', '-e', 'task-clock', '--', 'true'], { stdio: 'ignore' });
  } catch (error) {
    throw new Error(`--cpu needs \`perf stat -e task-clock\` to work here (Debian: apt-get install linux-perf; as root or with kernel.perf_event_paranoid <= 2): ${error.message}`);
  }
}

/** spawn(), under real-time scheduling with --realtime (chrt execs the command: no process in between). */
function run(bin, argv, options) {
  return REALTIME ? spawn('chrt', ['-f', '10', bin, ...argv], options) : spawn(bin, argv, options);
}
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('--runs must be a positive integer');

function nodeVersion(bin) {
  return execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
}
const major = (v) => Number(v.split('.')[0]);

/** The Node 22 that `npm ci` installs, or this one. */
function findNode22() {
  for (const bin of [process.execPath, join(root, 'node_modules', 'node', 'bin', 'node')]) {
    if (existsSync(bin) && major(nodeVersion(bin)) >= 22) return bin;
  }
  throw new Error('no Node >= 22: run `npm ci` (it installs Node 22 as a dev dependency)');
}

/** The machine's own node: the first on PATH outside any node_modules (npm run puts Node 22 first). */
function findMachineNode() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.split(/[\\/]/).includes('node_modules')) continue;
    const bin = join(dir, 'node');
    if (existsSync(bin)) return bin;
  }
  return process.execPath;
}

const node22 = findNode22();
const machineNode = findMachineNode();
const v22 = nodeVersion(node22);
const vMachine = nodeVersion(machineNode);
const nodes = [{ bin: node22, version: v22 }];
if (vMachine !== v22) nodes.push({ bin: machineNode, version: vMachine });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Runs a process to exit; resolves to milliseconds from spawn to exit. */
let perfFiles = 0;
function timeToExit(bin, argv, { input, expect, ...options } = {}) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    // perf execs the command as its child, so the process's parent (the "harness") does not change.
    const perfOut = CPU ? join(work, `perf-${perfFiles++}.txt`) : undefined;
    const [command, commandArgs] = CPU ? ['perf', ['stat', '-x', ',', '-e', 'task-clock', '-o', perfOut, '--', bin, ...argv]] : [bin, argv];
    const child = run(command, commandArgs, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - start;
      if (code !== 0) reject(new Error(`${bin} ${argv.join(' ')} exited ${code}: ${stderr}`));
      // A hook that answers nothing when it should (or the reverse) would time the wrong path.
      else if (expect !== undefined && expect !== stdout.includes('additionalContext')) reject(new Error(`${argv.join(' ')}: expected ${expect ? 'an answer' : 'silence'}, got ${JSON.stringify(stdout)} ${stderr}`));
      else if (perfOut === undefined) resolve(ms);
      else {
        const line = readFileSync(perfOut, 'utf8').split('\n').find((l) => l.includes('task-clock'));
        const cpuMs = Number(line?.split(',')[0]);
        if (!Number.isFinite(cpuMs)) reject(new Error(`perf stat gave no task-clock: ${readFileSync(perfOut, 'utf8')}`));
        else resolve(cpuMs);
      }
    });
    child.stdin?.end(input);
  });
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-startup', version: '0' } },
})}\n`;
const INITIALIZED = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`;
const LIST = `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`;

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
  return kb / 1024;
}

/**
 * Spawns an MCP server command, writes `initialize` at once (a harness does), and resolves to
 * { ms: spawn -> answer, rss: MiB once idle after tools/list }, then closes stdin and waits for exit.
 * `measureRss` false skips the idle wait (npx: the server is a grandchild).
 */
function timeToInitialize(bin, argv, env, { measureRss = true, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = run(bin, argv, { stdio: ['pipe', 'pipe', 'pipe'], env, cwd });
    let out = '';
    let stderr = '';
    let ms;
    let rss;
    child.on('error', reject);
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      let nl;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        const message = JSON.parse(line);
        if (message.id === 1) {
          ms = performance.now() - start;
          if (message.error) return reject(new Error(`initialize failed: ${line}`));
          if (!measureRss) return child.stdin.end();
          child.stdin.write(INITIALIZED + LIST);
        } else if (message.id === 2) {
          // Idle: give timers started at open (heartbeat, maintenance) their first turn.
          setTimeout(() => {
            rss = rssMiB(child.pid);
            child.stdin.end();
          }, 1000);
        }
      }
    });
    child.on('close', (code) => {
      if (ms === undefined) reject(new Error(`${argv.join(' ')} exited ${code} before answering: ${stderr}`));
      else resolve({ ms, rss });
    });
    child.stdin.write(INITIALIZE);
  });
}

const work = mkdtempSync(join(tmpdir(), 'agentbus-bench-startup-'));
const cleanEnv = { PATH: process.env.PATH ?? '', HOME: work };

function serverEnv(driver, name) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), '{}');
  return { ...cleanEnv, AGENTBUS_DATA_DIR: dir, AGENTBUS_CONFIG: join(dir, 'config.json'), AGENTBUS_DRIVER: driver };
}

/**
 * A running `agentbus mcp` of this process (which so plays its harness) holding Ann and Kim, with
 * a message from Ann unread for Kim: what `agentbus inbox --hook` finds after a tool call.
 * Resolves to { env, stop } once the server's inbox file names the unread message.
 */
function harnessServer(bin, path, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [path, 'mcp'], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let out = '';
    let stderr = '';
    const pending = new Map();
    let next = 10;
    const call = (name, a) =>
      new Promise((res, rej) => {
        const id = next++;
        pending.set(id, { res, rej });
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: a } })}\n`);
      });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`the harness's server exited ${code}: ${stderr}`)));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      let nl;
      while ((nl = out.indexOf('\n')) >= 0) {
        const message = JSON.parse(out.slice(0, nl));
        out = out.slice(nl + 1);
        const p = pending.get(message.id);
        if (p === undefined) continue;
        pending.delete(message.id);
        if (message.error || message.result?.isError) p.rej(new Error(JSON.stringify(message)));
        else p.res(message.result);
      }
    });
    child.stdin.write(INITIALIZE + INITIALIZED);
    (async () => {
      await call('register', { name: 'Ann' });
      await call('register', { name: 'Kim' });
      await call('subscribe', { as: 'Kim', channel: 'general' });
      await call('send', { as: 'Ann', channel: 'general', content: 'an unread message, so the hook has something to say' });
      // The server writes its inbox file after the commit; wait until a hook sees the message.
      const probe = { env, input: JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash' }) };
      for (let i = 0; ; i++) {
        try {
          await timeToExit(bin, [path, 'inbox', '--hook'], { ...probe, expect: true });
          break;
        } catch (error) {
          if (i === 50) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      child.removeAllListeners('close');
      resolve({
        env,
        stop: () => new Promise((r) => {
          child.on('close', r);
          child.stdin.end();
        }),
      });
    })().catch(reject);
  });
}
const harnesses = [];

// A project directory with an identity file, as the SessionStart hook finds it.
const project = join(work, 'project');
mkdirSync(join(project, '.local'), { recursive: true });
writeFileSync(join(project, '.local', 'agentbus.json'), JSON.stringify({ identity: 'Bench' }));

/** Every case of one round; `bare` names the bare-node case a figure is a ratio to. */
const cases = [];
const bins = COMPARE === undefined ? [{ path: BIN, label: '' }] : [{ path: BIN, label: '' }, { path: COMPARE, label: ' (compare)' }];
for (const { bin, version } of nodes) {
  const canNative = major(version) > 22 || (major(version) === 22 && Number(version.split('.')[1]) >= 13);
  // The inbox hook reads the server's files, never the database; its server runs this Node's own driver.
  const harness = { env: serverEnv(canNative ? 'native' : 'wasm', `inbox-${version}`) };
  harnesses.push({ bin, harness });
  cases.push({ name: `bare node ${version}`, key: `bare-${version}`, run: () => timeToExit(bin, ['-e', '0'], { env: cleanEnv }) });
  for (const { path, label } of bins) {
    for (const driver of canNative ? ['native', 'wasm'] : ['wasm']) {
      const env = serverEnv(driver, `${driver}-${version}${label ? '-compare' : ''}`);
      cases.push({
        name: `mcp: spawn -> initialize answer, ${driver}, Node ${version}${label}`,
        key: `mcp-${driver}-${version}${label}`,
        bare: `bare-${version}`,
        rss: true,
        setup: () => timeToInitialize(bin, [path, 'mcp'], env), // creates the database: not counted
        run: () => timeToInitialize(bin, [path, 'mcp'], env),
      });
    }
    cases.push({
      name: `identity (SessionStart hook), Node ${version}${label}`,
      key: `identity-${version}${label}`,
      bare: `bare-${version}`,
      run: () => timeToExit(bin, [path, 'identity'], { env: cleanEnv, cwd: project }),
    });
    // No session id: every run answers. With one, after the first (uncounted) run, nothing is new.
    const answering = JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { stdout: 'x'.repeat(2000) } });
    const quiet = JSON.stringify({ hook_event_name: 'PostToolUse', session_id: `bench${label}`, tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { stdout: 'x'.repeat(2000) } });
    cases.push({
      name: `inbox --hook (PostToolUse), answering, Node ${version}${label}`,
      key: `inbox-${version}${label}`,
      bare: `bare-${version}`,
      run: () => timeToExit(bin, [path, 'inbox', '--hook'], { env: harness.env, input: answering, expect: true }),
    });
    cases.push({
      name: `inbox --hook (PostToolUse), nothing new, Node ${version}${label}`,
      key: `inbox-quiet-${version}${label}`,
      bare: `bare-${version}`,
      setup: () => timeToExit(bin, [path, 'inbox', '--hook'], { env: harness.env, input: quiet, expect: true }),
      run: () => timeToExit(bin, [path, 'inbox', '--hook'], { env: harness.env, input: quiet, expect: false }),
    });
    cases.push({
      name: `--help, Node ${version}${label}`,
      key: `help-${version}${label}`,
      bare: `bare-${version}`,
      run: () => timeToExit(bin, [path, '--help'], { env: cleanEnv }),
    });
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(
  `bench-startup: ${RUNS} rounds, bin ${BIN}${COMPARE ? `, compare ${COMPARE}` : ''}, ${cpus().length} cores${REALTIME ? ', real-time priority (chrt -f 10)' : ''}${CPU ? ', short processes timed by CPU time (perf task-clock), not spawn -> exit' : ''}, load before: ${load()}`,
);
for (const h of harnesses) h.harness.stop = (await harnessServer(h.bin, BIN, h.harness.env)).stop;
for (const c of cases) await c.setup?.();
const samples = new Map(cases.map((c) => [c.key, { ms: [], rss: [] }]));
for (let round = 0; round < RUNS; round++) {
  for (const c of cases) {
    const result = await c.run();
    const s = samples.get(c.key);
    if (typeof result === 'number') s.ms.push(result);
    else {
      s.ms.push(result.ms);
      s.rss.push(result.rss);
    }
  }
}
const loadAfter = load();
for (const h of harnesses) await h.harness.stop();

const rows = cases.map((c) => {
  const s = samples.get(c.key);
  const ms = median(s.ms);
  const bare = c.bare === undefined ? undefined : median(samples.get(c.bare).ms);
  return {
    case: c.name,
    'median ms': Math.round(ms),
    'x bare node': bare === undefined ? '' : (ms / bare).toFixed(2),
    'min-max ms': `${Math.round(Math.min(...s.ms))}-${Math.round(Math.max(...s.ms))}`,
    'idle RSS MiB': c.rss ? median(s.rss).toFixed(1) : '',
  };
});
console.table(rows);
console.log(`load after: ${loadAfter}`);

if (PACKAGE) await benchPackage();
rmSync(work, { recursive: true, force: true });

/** The tarball as users get it: contents, install with each Node's npm, npx cold and warm. */
async function benchPackage() {
  const rowsPkg = [];
  for (const { bin, version } of nodes) {
    const dir = join(work, `package-${version}`);
    let t = performance.now();
    let packed;
    try {
      packed = packAndInstall(dir, { node: bin });
    } catch (error) {
      console.log(`Node ${version}: ${error.message}`);
      continue;
    }
    const packInstallMs = performance.now() - t;
    const [npm, npmArgs] = npmCommand(bin);
    const npxCli = npmArgs.length > 0 ? join(dirname(npmArgs[0]), 'npx-cli.js') : 'npx';
    const env = { ...cleanEnv, PATH: `${dirname(bin)}${delimiter}${cleanEnv.PATH}`, npm_config_update_notifier: 'false' };
    const tree = execFileSync(npm, [...npmArgs, 'ls', '--all', '--parseable'], { cwd: packed.project, env, encoding: 'utf8' }).trim().split('\n').length - 1;
    const warnings = (packed.installOutput.match(/^npm warn.*$/gim) ?? []).length;
    // npx with the tarball: a fresh npm cache per cold run; warm runs share one cache filled by a first, uncounted run.
    const serve = serverEnv('auto', `npx-${version}`);
    const npx = (cache) =>
      timeToInitialize(npmArgs.length > 0 ? bin : npxCli, [...(npmArgs.length > 0 ? [npxCli] : []), '--yes', '--package', packed.tarball, 'agentbus', 'mcp'], { ...env, ...serve, npm_config_cache: cache }, { measureRss: false, cwd: work });
    const cold = [];
    for (let i = 0; i < 3; i++) cold.push((await npx(join(work, `cache-cold-${version}-${i}`))).ms);
    const warmCache = join(work, `cache-warm-${version}`);
    await npx(warmCache);
    const warm = [];
    for (let i = 0; i < RUNS; i++) warm.push((await npx(warmCache)).ms);
    if (version === nodes[0].version) {
      const files = execFileSync('tar', ['-tzf', packed.tarball], { encoding: 'utf8' }).trim().split('\n');
      console.log(`\ntarball ${(statSync(packed.tarball).size / 1024).toFixed(0)} KiB, ${files.length} files`);
    }
    rowsPkg.push({
      node: version,
      'pack + install ms': Math.round(packInstallMs),
      'npm warnings': warnings,
      'packages in tree': tree,
      'npx cold -> initialize ms (median of 3)': Math.round(median(cold)),
      [`npx warm -> initialize ms (median of ${RUNS})`]: Math.round(median(warm)),
    });
  }
  console.table(rowsPkg);
  console.log(`load after: ${load()}`);
}
