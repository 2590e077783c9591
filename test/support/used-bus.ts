/**
 * A data directory a real `agentbus mcp` used: Alice registered (and with
 * `message`, a channel and one message), then the server stopped and gone,
 * so the files are as a finished session leaves them.
 */
import { expect } from 'vitest';
import { waitForPidExit } from '../cli/cli-process.js';
import { startMcp, type StartMcpOptions } from './mcp-process.js';

export async function usedBus(dataDir: string, options: StartMcpOptions & { readonly message?: boolean } = {}): Promise<void> {
  const server = await startMcp(dataDir, options);
  expect((await server.call('register', { name: 'Alice' })).error).toBeUndefined();
  if (options.message === true) {
    await server.call('create_channel', { as: 'Alice', name: 'work', kind: 'ordinary' });
    expect((await server.call('send', { as: 'Alice', channel: 'work', content: 'hello' })).error).toBeUndefined();
  }
  const pid = server.transport.pid;
  await server.close();
  await waitForPidExit(pid);
}
