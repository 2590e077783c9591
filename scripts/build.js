#!/usr/bin/env node
// The build (`npm run build`; `npm ci` and `npm pack` run it too):
// 1. tsc: type-checks and compiles src/ and drivers/ to dist/ (the test suite's
//    child processes import modules from there);
// 2. esbuild: bundles what runs into dist/bundle/, the code bin/agentbus.js starts
//    and the package ships: agentbus.cjs (argument parsing, help, usage errors),
//    one self-contained file per command (src/cli/commands/<name>/index.ts), which agentbus.cjs
//    requires only when that command runs, and sqlite-wasm.cjs (the SQLite wasm
//    runtime, with sqlite3.wasm beside it), which only the wasm driver requires,
//    and file-logger.cjs (the logger with tslog and rotating-file-stream), which a
//    hook command requires only when it has something to log.
//    A process loads three or four files, not dozens: each module file costs a
//    resolution (realpath of every path component) and a compile. The files are
//    CommonJS, so no process starts Node's ESM loader. Dependencies are
//    inlined; no source maps (they would point at sources not shipped);
// 3. dist/bundle/THIRD-PARTY-NOTICES.txt: the licence of every package inlined.
//   node scripts/build.js [--skip-tsc]
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const out = join(root, 'dist', 'bundle');

if (!process.argv.includes('--skip-tsc')) {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
}

const esbuild = await import('esbuild');
rmSync(out, { recursive: true, force: true });
// Every folder of src/cli/commands/ is a command; its index.ts is the entry main.ts loads.
const commands = readdirSync(join(root, 'src', 'cli', 'commands'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(root, 'src', 'cli', 'commands', e.name, 'index.ts')))
  .map((e) => e.name);
const sqliteDir = dirname(require.resolve('@sqlite.org/sqlite-wasm/package.json'));

/** main.ts's imports of command entries and the wasm driver's import of the runtime stay imports of sibling files. */
const siblings = {
  name: 'agentbus-siblings',
  setup(build) {
    build.onResolve({ filter: /^\.\/commands\/[a-z-]+\/index\.js$/ }, (args) =>
      args.importer.endsWith(join('src', 'cli', 'main.ts')) ? { path: `./${args.path.split('/')[2]}.cjs`, external: true } : undefined,
    );
    build.onResolve({ filter: /^@sqlite\.org\/sqlite-wasm$/ }, () => ({ path: './sqlite-wasm.cjs', external: true }));
    // The runtime's bundle exports its init function as module.exports, which is what an
    // import() of a CommonJS file from ESM source (src/, the tests' dist/) yields as default,
    // the same as the package's own ESM default export.
    build.onResolve({ filter: /^agentbus:sqlite-wasm$/ }, () => ({ path: 'sqlite-wasm', namespace: 'agentbus-entry' }));
    build.onLoad({ filter: /.*/, namespace: 'agentbus-entry' }, () => ({
      loader: 'js',
      resolveDir: root,
      contents: `module.exports = require(${JSON.stringify(join(sqliteDir, 'dist', 'node.mjs'))}).default;`,
    }));
  },
};

/**
 * Built-in modules a process may never need, or needs only after the first answer: loading
 * child_process and zlib costs about 2.5 MiB of RSS (rotating-file-stream imports them for
 * compression, which agentbus does not configure; the inspection hook spawns only when one is
 * set), and crypto is first needed when the database opens. Their imports become functions
 * that load the module on first call. Only the names listed can be imported from them: another
 * one fails the build ("No matching export"), and then belongs here.
 */
const LAZY_BUILTINS = {
  child_process: ['exec', 'execFileSync', 'spawn', 'spawnSync'],
  zlib: ['createGzip'],
  crypto: ['createHash', 'randomBytes', 'randomFillSync', 'randomUUID', 'timingSafeEqual'],
};
const lazyBuiltins = {
  name: 'agentbus-lazy-builtins',
  setup(build) {
    // The shim's own require() of the module resolves as usual, to the built-in.
    build.onResolve({ filter: /^(node:)?(child_process|zlib|crypto)$/ }, (args) =>
      args.namespace === 'lazy-builtin' ? undefined : { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' },
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      loader: 'js',
      contents: [
        'let loaded;',
        `const load = () => (loaded ??= require('node:${args.path}'));`,
        ...LAZY_BUILTINS[args.path].map((name) => `export function ${name}(...args) { return load().${name}(...args); }`),
      ].join('\n'),
    }));
  },
};

/**
 * Modules a command may load with `await import()` only when it needs them, built as files of
 * their own: esbuild without code splitting inlines a dynamic import, and then every run parses
 * what it rarely calls. The hook commands run after every tool call; the file logger (tslog and
 * rotating-file-stream) is about three quarters of the inbox bundle, and the inbox logs only
 * when something went wrong. A dynamic import of one of these becomes an import of the sibling
 * file; a static import of the same module (the MCP server logs from the start) stays inlined.
 */
// The postgres driver (only a database_url loads it) and the worker thread that holds `pg`: a SQLite
// user's process loads neither, and the command bundles stay as small as before.
const ON_DEMAND = {
  'src/log.ts': 'file-logger',
  'src/db/open/open-postgres.ts': 'postgres-open',
  'src/cli/server-database.ts': 'server-database',
  'drivers/postgres/postgres-driver.ts': 'postgres-driver',
};
/** Files a worker thread starts from, never imported: entries of their own. */
const WORKERS = { 'postgres-worker': 'drivers/postgres/bridge-worker.ts' };
const onDemand = {
  name: 'agentbus-on-demand',
  setup(build) {
    build.onResolve({ filter: /\.js$/ }, (args) => {
      if (args.kind !== 'dynamic-import' || !args.path.startsWith('.')) return undefined;
      const target = relative(root, join(args.resolveDir, args.path)).replace(/\.js$/, '.ts');
      const name = ON_DEMAND[target];
      return name === undefined ? undefined : { path: `./${name}.cjs`, external: true };
    });
  },
};

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: {
    agentbus: 'src/cli/main.ts',
    ...Object.fromEntries(commands.map((c) => [c, `src/cli/commands/${c}/index.ts`])),
    'sqlite-wasm': 'agentbus:sqlite-wasm',
    ...Object.fromEntries(Object.entries(ON_DEMAND).map(([source, name]) => [name, source])),
    ...WORKERS,
  },
  // pg requires its optional native binding only when asked to (agentbus never asks).
  external: ['pg-native'],
  outdir: out,
  bundle: true,
  splitting: false,
  // CommonJS, not ESM: a process whose code is all CommonJS never starts Node's ESM loader,
  // which cost a hook command about 15% of its wall time on Node 20 and 5% on Node 22
  // (bench:startup, docs/performance.md). Every import() becomes a require(), so nothing starts it later either.
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  supported: { 'dynamic-import': false },
  // The bundles locate files beside themselves (sqlite3.wasm, the web console's page, the
  // package root) through import.meta.url, which CommonJS does not have.
  define: { 'import.meta.url': 'import_meta_url' },
  banner: { js: 'const import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  platform: 'node',
  // ESM builds of dependencies first (mri ships both; the CommonJS one needs a wrapper).
  mainFields: ['module', 'main'],
  // The oldest Node the package supports (engines).
  target: 'node20',
  // Readable stack traces and log lines: whitespace and syntax only, names kept.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none', // the notices file carries them
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
  plugins: [siblings, onDemand, lazyBuiltins],
});
for (const command of commands) {
  if (!existsSync(join(out, `${command}.cjs`))) throw new Error(`build: no bundle for the command entry ${command}`);
  if (Object.values(ON_DEMAND).includes(command)) throw new Error(`build: the command ${command} and an on-demand module share a file name`);
}
// The runtime fetches its binary relative to its own module (import.meta.url).
copyFileSync(join(sqliteDir, 'dist', 'sqlite3.wasm'), join(out, 'sqlite3.wasm'));
// The web console's page (`agentbus web`): served as they are, from beside the web command's bundle
// (every file of src/web/static; the server lists the ones it serves, PAGE_FILES in web-server.ts).
mkdirSync(join(out, 'web-console'));
for (const file of readdirSync(join(root, 'src', 'web', 'static'))) copyFileSync(join(root, 'src', 'web', 'static', file), join(out, 'web-console', file));

/** The packages inlined into the bundle, from esbuild's record of its inputs. */
function bundledPackages() {
  const dirs = new Set();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const input of Object.keys(output.inputs)) {
      const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (m) dirs.add(join(root, m[1]));
    }
  }
  return [...dirs].sort();
}

const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt))?$/i;

function notice(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const files = readdirSync(dir).filter((f) => LICENCE_FILE.test(f)).sort();
  let text = files.map((f) => readFileSync(join(dir, f), 'utf8').trim()).join('\n\n');
  if (text === '') {
    const standard = join(root, 'scripts', 'licenses', `${pkg.license}.txt`);
    if (!existsSync(standard)) throw new Error(`build: ${pkg.name} ships no licence file and scripts/licenses/${pkg.license}.txt is missing`);
    text = `(${pkg.name} ships no licence file; its package.json says ${pkg.license}, whose text follows.)\n\n${readFileSync(standard, 'utf8').trim()}`;
  }
  const extra =
    pkg.name === '@sqlite.org/sqlite-wasm'
      ? '\n\nSQLite itself, which this package compiles to WebAssembly (sqlite3.wasm), is in the public domain: https://sqlite.org/copyright.html'
      : '';
  return `${pkg.name} ${pkg.version} (${pkg.license})${pkg.homepage ? `\n${pkg.homepage}` : ''}\n\n${text}${extra}`;
}

const packages = bundledPackages();
const rule = `\n\n${'-'.repeat(78)}\n\n`;
writeFileSync(
  join(out, 'THIRD-PARTY-NOTICES.txt'),
  `agentbus-mcp inlines the following packages in dist/bundle/ (and ships sqlite3.wasm from\n@sqlite.org/sqlite-wasm). Their licences:${rule}${packages.map(notice).join(rule)}\n`,
);
const size = Object.entries(result.metafile.outputs).reduce((n, [, o]) => n + o.bytes, 0);
console.log(
  `build: ${relative(root, out)}/: ${Object.keys(result.metafile.outputs).length} files, ${(size / 1024).toFixed(0)} KiB of JavaScript; inlined ${packages.map((d) => relative(join(root, 'node_modules'), d)).join(', ')}`,
);
