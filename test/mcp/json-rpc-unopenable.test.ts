/**
 * The JSON-RPC layer of agentbus mcp with a database file it cannot open (split from
 * json-rpc.test.ts: SQLite file only; postgres's start-up failures are
 * test/postgres/mcp-start-up.test.ts).
 *
 * The protocol layer agentbus speaks itself (src/mcp/json-rpc-connection.ts,
 * mcp-server.ts), checked on a real `agentbus mcp` process with raw JSON-RPC
 * lines: version negotiation, ping, errors for bad requests, cancellation.
 * The SDK's own client and the MCP Inspector drive the same process in
 * bus-over-mcp.test.ts and test/install.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jsonAt } from '../support/json-at.js';
import { tempDir } from '../support/test-driver.js';
import { initialize, startRaw } from './raw-json-rpc.js';

describe('the JSON-RPC layer of agentbus mcp', () => {
  it('answers initialize and tools/list before the database opens; one it cannot open answers each call with why, and exit 1 at the end', async () => {
    const dir = tempDir();
    writeFileSync(`${dir}/agentbus.db`, Buffer.alloc(8192, 'not a database '));
    const server = startRaw(dir);
    server.send(initialize(1, '2025-06-18'));
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'register', arguments: { name: 'Ann' } } });
    const refused = await server.next((m) => m.id === 3);
    expect(jsonAt(server.received.find((m) => m.id === 1), 'result', 'serverInfo')).toMatchObject({ name: 'agentbus' });
    expect(jsonAt(server.received.find((m) => m.id === 2), 'result', 'tools')).toEqual(expect.arrayContaining([expect.anything()]));
    // The call that waited for the database gets the reason as a tool error, not a closed connection.
    expect(jsonAt(refused, 'result', 'isError')).toBe(true);
    expect(jsonAt(refused, 'result', 'structuredContent', 'error')).toMatchObject({ code: 'storage_unavailable', retryable: false });
    server.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    await server.next((m) => m.id === 4);
    server.child.stdin.end();
    const [code] = (await once(server.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(server.stderr().trim().split('\n')).toHaveLength(1);
    expect(server.stderr()).toContain(`${dir}/agentbus.db`);
  });
});
