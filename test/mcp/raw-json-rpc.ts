/**
 * A real `agentbus mcp` process spoken to in raw JSON-RPC lines (json-rpc.test.ts and
 * json-rpc-unopenable.test.ts): what it answered, waiting for a message, its stderr; every
 * process started is ended after each test.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { afterEach } from 'vitest';
import { AGENTBUS_BIN, serverEnv } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

export type Message = { jsonrpc: string; id?: string | number; method?: string; result?: unknown; error?: { code: number; message: string }; params?: unknown };

export interface RawServer {
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

export function startRaw(dir = tempDir()): RawServer {
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

export const initialize = (id: number, protocolVersion: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
