/**
 * `agentbus mcp` with a database_url: a start-up failure a person must fix
 * (a malformed URL, a wrong password, no server) does not end the server;
 * every tool call answers it as a tool error naming the fix; a server that
 * comes up later, or restarts, is used without restarting agentbus; with a
 * URL that works, two servers on one database talk. Real processes over
 * stdio, real clusters.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.js';
import { OPEN_RETRY_GAP_MS } from '../../src/mcp/bus-process.js';
import { AGENTBUS_BIN } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';
import { TEST_PASSWORD } from './global-setup.js';
import { freshDatabase } from './pg-test.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** A server whose AGENTBUS_DATABASE_URL is `url`, connected; `stderr` collects what it says. */
async function startServer(url: string) {
  const home = tempDir();
  const data = join(home, 'data');
  mkdirSync(data);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [AGENTBUS_BIN, 'mcp'],
    env: { ...getDefaultEnvironment(), HOME: home, AGENTBUS_DATA_DIR: data, AGENTBUS_DATABASE_URL: url },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'agentbus-test', version: '0' });
  await client.connect(transport);
  clients.push(client);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    ((await client.callTool({ name, arguments: args })).structuredContent ?? {}) as Record<string, unknown>;
  return { call, stderr: () => stderr, pid: transport.pid };
}

async function refusedTwice(server: Awaited<ReturnType<typeof startServer>>, code: string, retryable: boolean): Promise<string> {
  let message = '';
  for (const tool of ['register', 'discover']) {
    const { error } = toolAnswer(ToolError, await server.call(tool, tool === 'register' ? { name: 'Bob' } : {}), tool);
    expect(error).toMatchObject({ code, retryable });
    message = error.message;
  }
  return message;
}

describe('agentbus mcp on a database_url that cannot be used', () => {
  it('a malformed URL: storage_unavailable naming AGENTBUS_DATABASE_URL, the URL not echoed, the server up', async () => {
    const server = await startServer('postgres://agentbus:s3cret@');
    const message = await refusedTwice(server, 'storage_unavailable', false);
    expect(message).toContain('AGENTBUS_DATABASE_URL');
    expect(message).not.toContain('s3cret');
    expect(server.stderr()).not.toContain('s3cret');
  });

  it('a wrong password: permission_denied saying to check the password, never showing it', async () => {
    const url = new URL(await freshDatabase());
    url.password = 'wrong-password';
    const server = await startServer(url.toString());
    const message = await refusedTwice(server, 'permission_denied', false);
    expect(message).toContain('password');
    expect(message).not.toContain('wrong-password');
    expect(server.stderr()).not.toContain('wrong-password');
    expect(server.stderr()).not.toContain(TEST_PASSWORD);
  });

  it('no server at the address: storage_unavailable, retryable', async () => {
    const server = await startServer('postgres://agentbus@127.0.0.1:1/agentbus');
    await refusedTwice(server, 'storage_unavailable', true);
  });

  it('a good URL opens: two servers on one database register, subscribe, send and receive over MCP', async () => {
    const url = await freshDatabase();
    const [one, two] = [await startServer(url), await startServer(url)];
    expect(await one.call('register', { name: 'Alice' })).toMatchObject({ display_name: 'Alice' });
    expect(await two.call('register', { name: 'Bob' })).toMatchObject({ display_name: 'Bob' });
    expect(await two.call('subscribe', { as: 'Bob', channel: 'general' })).toMatchObject({ channel: 'general' });
    const sent = await one.call('send', { as: 'Alice', channel: 'general', content: 'across servers' });
    const received = await two.call('receive', { as: 'Bob', wait_seconds: 0 });
    expect((received.messages as { seq: number; content: string }[]).map((m) => [m.seq, m.content])).toEqual([[sent.seq, 'across servers']]);
    expect(one.pid).not.toBe(two.pid);
    expect(inject('pgUrl')).toContain('127.0.0.1');
  });

  it('a server that is down at start-up is used once it is up, and a restart under a running agentbus costs at most one retryable error', async () => {
    const cluster = await startCluster({ fsync: false });
    try {
      cluster.stopServer();
      const server = await startServer(cluster.url);
      await refusedTwice(server, 'storage_unavailable', true);
      cluster.startServer();
      await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_GAP_MS + 100));
      expect(await server.call('register', { name: 'Carol' })).toMatchObject({ display_name: 'Carol' });
      cluster.restart();
      const answers = [await server.call('discover', { as: 'Carol' }), await server.call('discover', { as: 'Carol' })];
      const errors = answers.map((a) => a.error as { code: string; retryable: boolean } | undefined).filter((e) => e !== undefined);
      expect(errors.length).toBeLessThanOrEqual(1);
      for (const e of errors) expect(e.retryable).toBe(true);
      expect(answers.at(-1)?.sessions).toBeDefined();
    } finally {
      cluster.stop();
    }
  });
});
