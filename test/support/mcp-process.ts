/**
 * Real `agentbus mcp` processes driven over stdio by the MCP SDK's client, with
 * the driver of the current vitest project and an isolated data directory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach } from 'vitest';
import { withoutDacOverride } from './privileges.js';
import { testDriverEnv } from './test-driver.js';

export const AGENTBUS_BIN = fileURLToPath(new URL('../../bin/agentbus.js', import.meta.url));

export interface McpProcess {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** Calls a tool and returns its structuredContent, whether success or error. */
  call(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const open: McpProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.close()));
});

/** Sends `signal` to the server process (as a crash or a closed terminal would) and waits until it is gone. */
export async function killMcp(server: McpProcess, signal: NodeJS.Signals): Promise<void> {
  const pid = server.transport.pid;
  if (pid === null) throw new Error('the server process has no pid: it never started or is already gone');
  const closed = new Promise<void>((resolve) => {
    server.transport.onclose = () => resolve();
  });
  process.kill(pid, signal);
  await closed;
}

/** The environment a server process gets: isolated data directory, the project's driver (on postgres: the data directory's database_url). */
export function serverEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...getDefaultEnvironment(), AGENTBUS_DATA_DIR: dataDir, ...testDriverEnv(dataDir), AGENTBUS_CONFIG: `${dataDir}/config.json`, ...extra };
}

export interface StartMcpOptions {
  /** Settings written to the config file the server reads (default: none, all defaults). */
  readonly config?: Record<string, unknown>;
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** The agentbus executable to run (default: this checkout's bin/agentbus.js), e.g. an installed package's. */
  readonly bin?: string;
  /** The node executable (default: this test's). */
  readonly node?: string;
  /** Run as root without CAP_DAC_OVERRIDE (setpriv), so file modes and owners apply; only when the tests run as root. */
  readonly withoutDacOverride?: boolean;
  /** Where the config file goes (default: `<dataDir>/config.json`), for a data directory the server must not be able to use. */
  readonly configPath?: string;
}

/** Spawns `agentbus mcp` and connects a client (initialize done, tools listed so outputs are validated). */
export async function startMcp(dataDir: string, options: StartMcpOptions = {}): Promise<McpProcess> {
  const { cwd, env: extraEnv = {}, bin = AGENTBUS_BIN, node = process.execPath } = options;
  const configPath = options.configPath ?? `${dataDir}/config.json`;
  if (options.configPath === undefined) mkdirSync(dataDir, { recursive: true });
  writeFileSync(configPath, JSON.stringify(options.config ?? {}));
  const [command, args] = options.withoutDacOverride ? withoutDacOverride(node, [bin, 'mcp']) : [node, [bin, 'mcp']];
  const transport = new StdioClientTransport({
    command,
    args,
    env: serverEnv(dataDir, { AGENTBUS_CONFIG: configPath, ...extraEnv }),
    stderr: 'pipe',
    ...(cwd === undefined ? {} : { cwd }),
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'agentbus-test', version: '0' });
  await client.connect(transport);
  await client.listTools();
  let closed = false;
  const proc: McpProcess = {
    client,
    transport,
    stderr: () => stderr,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      return (result.structuredContent ?? {}) as Record<string, unknown>;
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
  open.push(proc);
  return proc;
}
