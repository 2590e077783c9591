import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENTBUS_BIN, serverEnv } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

function request(id: number, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
}

describe('stdout of agentbus mcp', () => {
  it('carries JSON-RPC and nothing else, even for garbage, unknown tools and bad arguments', async () => {
    const dir = tempDir();
    writeFileSync(`${dir}/config.json`, '{}');
    const child = spawn(process.execPath, [AGENTBUS_BIN, 'mcp'], { env: serverEnv(dir), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const input = [
      request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n',
      'this is not json\n',
      request(2, 'tools/list', {}),
      request(3, 'tools/call', { name: 'no_such_tool', arguments: {} }),
      request(4, 'tools/call', { name: 'register', arguments: { name: 42, extra: true } }),
      request(5, 'no/such/method', {}),
    ];
    for (const line of input) child.stdin.write(line);
    const deadline = Date.now() + 20_000;
    while (!stdout.includes('"id":5') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    const [code] = await once(child, 'exit');
    expect(code, stderr).toBe(0);
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    const byId = new Map(lines.map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown>; error?: unknown }).map((m) => [m.id, m]));
    expect(byId.get(1)?.result?.serverInfo).toMatchObject({ name: 'agentbus' });
    expect(byId.get(3)?.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation' } } });
    expect(byId.get(4)?.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation' } } });
    expect(byId.get(5)?.error).toBeDefined();
    expect(stderr).toBe('');
  });
});
