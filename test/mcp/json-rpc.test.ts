/**
 * The protocol layer agentbus speaks itself (src/mcp/json-rpc-connection.ts,
 * mcp-server.ts), checked on a real `agentbus mcp` process with raw JSON-RPC
 * lines: version negotiation, ping, errors for bad requests, cancellation.
 * The SDK's own client and the MCP Inspector drive the same process in
 * bus-over-mcp.test.ts and test/install.
 */
import { once } from 'node:events';
import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS, LATEST_PROTOCOL_VERSION as SDK_LATEST } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../src/mcp/protocol-version.js';
import { isJsonObject, jsonAt } from '../support/json-at.js';
import { initialize, startRaw } from './raw-json-rpc.js';

describe('the JSON-RPC layer of agentbus mcp', () => {
  it('lists the protocol revisions of the MCP SDK it is tested with', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(SDK_VERSIONS);
    expect(LATEST_PROTOCOL_VERSION).toBe(SDK_LATEST);
  });

  it('answers initialize with the revision asked for when it knows it, else the newest', async () => {
    const server = startRaw();
    server.send(initialize(1, '2025-06-18'));
    server.send(initialize(2, '1999-01-01'));
    const known = await server.next((m) => m.id === 1);
    const unknown = await server.next((m) => m.id === 2);
    expect(known.result).toMatchObject({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'agentbus' } });
    expect(typeof jsonAt(known.result, 'instructions')).toBe('string');
    expect(jsonAt(unknown.result, 'protocolVersion')).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('answers ping, and string ids as well as numbers', async () => {
    const server = startRaw();
    server.send({ jsonrpc: '2.0', id: 'p-1', method: 'ping' });
    expect((await server.next((m) => m.id === 'p-1')).result).toEqual({});
  });

  it('answers bad requests with JSON-RPC errors naming the problem, and stays up', async () => {
    const server = startRaw();
    server.send(initialize(1, 42));
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } });
    server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'register', arguments: [1] } });
    server.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: [1, 2] });
    server.send({ jsonrpc: '2.0', id: 5, method: 'resources/list' });
    server.send('{"jsonrpc": "2.0", "id": 6, "method": \n');
    server.send({ jsonrpc: '1.0', id: 7, method: 'ping' });
    server.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect((await server.next((m) => m.id === 1)).error).toMatchObject({ code: -32602, message: expect.stringContaining('protocolVersion') });
    expect((await server.next((m) => m.id === 2)).error).toMatchObject({ code: -32602, message: expect.stringContaining('params.name') });
    expect((await server.next((m) => m.id === 3)).error).toMatchObject({ code: -32602, message: expect.stringContaining('params.arguments') });
    expect((await server.next((m) => m.id === 4)).error).toMatchObject({ code: -32600 });
    expect((await server.next((m) => m.id === 5)).error).toMatchObject({ code: -32601, message: expect.stringContaining('resources/list') });
    await server.next((m) => m.id === 8);
    // The broken line and the wrong jsonrpc version are dropped, never answered with anything but JSON-RPC.
    expect(server.received.filter((m) => m.id === 6 || m.id === 7)).toEqual([]);
    expect(server.stderr()).toBe('');
  });

  it('sends no response to a cancelled request, and keeps answering the rest', async () => {
    const server = startRaw();
    server.send(initialize(1, '2025-06-18'));
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'register', arguments: { name: 'Ann' } } });
    server.send({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'create_channel', arguments: { as: 'Ann', name: 'c', kind: 'ordinary' } } });
    server.send({ jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'subscribe', arguments: { as: 'Ann', channel: 'c' } } });
    expect(jsonAt(await server.next((m) => m.id === 21), 'result')).not.toHaveProperty('isError');
    server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'receive', arguments: { as: 'Ann', wait_seconds: 30 }, _meta: { progressToken: 'w' } } });
    // Progress shows the wait has started; then cancel it.
    await server.next((m) => m.method === 'notifications/progress' && isJsonObject(m.params) && m.params.progressToken === 'w');
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'test' } });
    server.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    await server.next((m) => m.id === 4);
    await new Promise((r) => setTimeout(r, 300));
    expect(server.received.filter((m) => m.id === 3)).toEqual([]);
  });

  it('answers every request already read when the client closes its input, ending a long wait early, then exits', async () => {
    const server = startRaw();
    const call = (id: number, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    server.send(initialize(1, '2025-06-18'));
    server.send(call(2, 'register', { name: 'Ann' }));
    server.send(call(3, 'create_channel', { as: 'Ann', name: 'c', kind: 'ordinary' }));
    server.send(call(4, 'subscribe', { as: 'Ann', channel: 'c' }));
    const waitSeconds = 60;
    server.send(call(5, 'receive', { as: 'Ann', wait_seconds: waitSeconds }));
    const started = Date.now();
    server.child.stdin.end();
    const [code] = (await once(server.child, 'exit')) as [number | null];
    expect(code, server.stderr()).toBe(0);
    expect(server.received.map((m) => m.id).sort()).toEqual([1, 2, 3, 4, 5]);
    for (const m of server.received.filter((m) => m.id !== 1)) expect(isJsonObject(m.result) ? m.result.isError : undefined, JSON.stringify(m)).toBeUndefined();
    expect(jsonAt(server.received.find((m) => m.id === 5), 'result', 'structuredContent', 'messages')).toEqual([]);
    // The wait ended with the input, not with its own deadline.
    expect(Date.now() - started).toBeLessThan(waitSeconds * 1000);
  }, 90_000);
});
