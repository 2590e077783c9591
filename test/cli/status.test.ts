import { describe, expect, it } from 'vitest';
import { startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { jsonOf, prepareCliDir, runCli } from './cli-process.js';

describe('agentbus status', () => {
  it('shows live sessions, channels, usage against the budget, driver and protocol, as JSON and as text', async () => {
    const dir = tempDir();
    const server = await startMcp(dir, { config: { sqlite_budget_mib: 64 } });
    await server.call('register', { name: 'Alice' });
    await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    await server.call('subscribe', { as: 'Alice', channel: 'work' });
    await server.call('send', { as: 'Alice', channel: 'work', content: 'hello' });

    const run = await runCli(dir, ['status', '--json']);
    expect(run.code).toBe(0);
    const report = jsonOf(run);
    expect(report.data_directory).toBe(dir);
    const { db } = await openTestDatabase(dir);
    const { capabilities } = db;
    db.close();
    expect(report.database).toMatchObject({
      exists: true,
      driver: capabilities.name,
      lock_protocol: capabilities.lockProtocol,
      schema_version: expect.any(Number),
    });
    expect(report.sessions.map((s: any) => s.display_name)).toEqual(['Alice']);
    expect(report.channels).toContainEqual({ name: 'work', kind: 'ordinary', messages: 1, subscribers: 1 });
    expect(report.usage.budget_bytes).toBe(64 * 1024 * 1024);
    expect(report.usage.used_bytes).toBeGreaterThan(0);
    expect(report.usage.percent).toBeCloseTo((report.usage.used_bytes / report.usage.budget_bytes) * 100, 0);
    expect(report.notices).toEqual([]);
    expect(report.embeddings).toEqual({ enabled: false, model: null, backlog: null });

    const text = await runCli(dir, ['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/usage +\[[#-]{20}\] [\d.]+%/);
    expect(text.stdout).toMatch(/sessions +1 live/);
    expect(text.stdout).toMatch(/Alice/);
    expect(text.stdout).toMatch(/work +ordinary +1 message/);
    expect(text.stderr).toBe('');
  });

  it('shows the embedding backlog when an endpoint is configured', async () => {
    const dir = tempDir();
    const server = await startMcp(dir, { config: { embedding_endpoint: 'http://127.0.0.1:9/v1/embeddings', embedding_model: 'm1' } });
    await server.call('register', { name: 'Alice' });
    const run = await runCli(dir, ['status', '--json']);
    expect(run.code).toBe(0);
    expect(jsonOf(run).embeddings).toEqual({ enabled: true, model: 'm1', backlog: 0 });
  });

  it('fails with exit 1 and names the key on a bad config value', async () => {
    const dir = tempDir();
    prepareCliDir(dir, { config: { sqlite_budget_mib: 1 } });
    const run = await runCli(dir, ['status']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/sqlite_budget_mib/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
