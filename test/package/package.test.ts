/**
 * What users get: the tarball `npm pack` makes, installed with npm into a
 * fresh project (test/support/global-setup.ts), then used as a user would:
 * the MCP server over stdio through the SDK's client, and the CLI, both run
 * from the project's node_modules/.bin/agentbus.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { jsonOf, prepareCliDir, runCli } from '../cli/cli-process.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

const packed = inject('packedInstall');
const bin = join(packed.project, 'node_modules', '.bin', 'agentbus');
const manifest = JSON.parse(readFileSync(join(packed.packageDir, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  engines?: { node?: string };
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
};

/** The packages bundled into dist/bundle/, each of which must have its licence in the notices. */
const BUNDLED = ['@sqlite.org/sqlite-wasm', '@valibot/to-json-schema', 'mri', 'rotating-file-stream', 'sade', 'tslog', 'valibot',
  // The postgres driver's worker (dist/bundle/postgres-worker.cjs): pg and what it requires.
  'pg', 'pg-connection-string', 'pg-protocol', 'pg-types', 'pgpass', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval'];

describe('the packed package', () => {
  it('holds what runs, the docs, its licence and the licences of what it bundles, and nothing else', () => {
    const files = execFileSync('tar', ['-tzf', packed.tarball], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
    const allowed = /^(bin\/agentbus\.js|bin\/package\.json|dist\/bundle\/[\w.-]+\.(cjs|wasm|txt)|dist\/bundle\/web-console\/(index\.html|app\.js|app\.css|favicon\.svg)|sql\/(postgres\/)?\d{4}_[\w-]+\.sql|docs\/[\w-]+\.md|README\.md|LICENSE|package\.json)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    for (const needed of ['bin/agentbus.js', 'bin/package.json', 'dist/bundle/agentbus.cjs', 'dist/bundle/mcp.cjs', 'dist/bundle/sqlite3.wasm', 'LICENSE', 'dist/bundle/THIRD-PARTY-NOTICES.txt', 'dist/bundle/web.cjs', 'dist/bundle/web-console/index.html', 'dist/bundle/web-console/app.js', 'dist/bundle/web-console/app.css', 'dist/bundle/web-console/favicon.svg', 'dist/bundle/postgres-driver.cjs', 'dist/bundle/postgres-worker.cjs', 'sql/postgres/0011_schema.sql']) {
      expect(files).toContain(needed);
    }
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(packed.packageDir, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const notices = readFileSync(join(packed.packageDir, 'dist', 'bundle', 'THIRD-PARTY-NOTICES.txt'), 'utf8');
    for (const name of BUNDLED) expect(notices, name).toMatch(new RegExp(`^${name.replace(/[./]/g, '\\$&')} \\S+ \\(`, 'm'));
    expect(notices).toContain('Apache License');
  });

  it('installs with no install script, no warning, and nothing but itself in the tree', () => {
    expect(packed.installOutput).not.toMatch(/EBADENGINE|install-scripts|deprecated|npm warn|npm WARN/);
    const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare'];
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => lifecycle.includes(s))).toEqual([]);
    expect(manifest.dependencies ?? {}).toEqual({});
    // Every package in the installed tree: agentbus-mcp alone, whose engines admit Node 20 and 22.
    expect(readdirSync(join(packed.project, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['agentbus-mcp']);
    expect(manifest.engines?.node).toBe('>=20');
    expect(realpathSync(bin)).toBe(join(realpathSync(packed.packageDir), 'bin', 'agentbus.js'));
  });

  it('serves MCP over stdio from the install: initialize, tools, and a message round trip', async () => {
    const dir = tempDir();
    const a = await startMcp(dir, { bin });
    const b = await startMcp(dir, { bin });
    const tools = await a.client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('register');
    expect(a.client.getServerVersion()).toMatchObject({ name: 'agentbus', version: manifest.version });
    await a.call('register', { name: 'Ann' });
    await b.call('register', { name: 'Ben' });
    await a.call('create_channel', { as: 'Ann', name: 'packed', kind: 'ordinary' });
    await b.call('subscribe', { as: 'Ben', channel: 'packed', from: 'oldest' });
    await a.call('send', { as: 'Ann', channel: 'packed', content: 'from the tarball' });
    const got = (await b.call('receive', { as: 'Ben', wait_seconds: 5 })) as { messages: { content: string }[] };
    expect(got.messages.map((m) => m.content)).toEqual(['from the tarball']);
    expect(a.stderr()).toBe('');
  });

  it('runs the CLI from the install: version, identity, status, a usage error', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const version = await runCli(dir, ['--version'], { bin });
    expect(version.stdout.trim()).toBe(`agentbus, ${manifest.version}`);
    const identity = await runCli(dir, ['identity'], { bin });
    expect(identity.code, identity.stderr).toBe(0);
    expect(identity.stdout).toMatch(/^Agentbus: call register with name /);
    const status = await runCli(dir, ['status', '--json'], { bin });
    expect(status.code, status.stderr).toBe(0);
    expect(jsonOf(status)).toHaveProperty('data_directory');
    const usage = await runCli(dir, ['statsu'], { bin });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('did you mean "status"?');
  });

  it('runs through npx in the installed project, as the install docs show', () => {
    const run = spawnSync('npx', ['--prefix', packed.project, 'agentbus', '--version'], {
      cwd: tempDir(),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: tempDir(), npm_config_update_notifier: 'false' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(`agentbus, ${manifest.version}`);
  });
});
