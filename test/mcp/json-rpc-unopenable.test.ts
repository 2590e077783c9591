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
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS, LATEST_PROTOCOL_VERSION as SDK_LATEST } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../src/mcp/protocol-version.js';
import { isJsonObject, jsonAt } from '../support/json-at.js';
import { AGENTBUS_BIN, serverEnv } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

type Message = { jsonrpc: string; id?: string | number; method?: string; result?: unknown; error?: { code: number; message: string }; params?: unknown };

interface RawServer {
  send(message: object | string): void;
  /** The next message matching `match`, waiting up to 20 s. */
  next(match: (m: Message) => boolean): Promise<Message>;
  /** Every message received so far. */
  readonly received: Message[];
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
}

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode === null) {
      child.stdin.end();
      await once(child, 'exit');
    }
  }
});

function startRaw(dir = tempDir()): RawServer {
  writeFileSync(`${dir}/config.json`, '{}');
  const child = spawn(process.execPath, [AGENTBUS_BIN, 'mcp'], { env: serverEnv(dir), stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(child);
  const received: Message[] = [];
  let buffer = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      received.push(JSON.parse(buffer.slice(0, nl)) as Message);
      buffer = buffer.slice(nl + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    child,
    received,
    stderr: () => stderr,
    send: (message) => child.stdin.write(typeof message === 'string' ? message : `${JSON.stringify(message)}\n`),
    async next(match) {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const found = received.find(match);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(received)}; stderr ${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

const initialize = (id: number, protocolVersion: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

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
