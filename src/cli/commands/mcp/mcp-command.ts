/** `agentbus mcp`: the stdio MCP server a harness spawns. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../config.js';
import { runMcp } from '../../../mcp/run-mcp.js';
import { holdOptimisingCompiler } from '../../../mcp/start-up-compiler.js';
import { packageRoot } from '../../../package-root.js';
import { packageVersion } from '../../../package-version.js';
import type { CliIo } from '../../cli-io.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus mcp` takes (its spec.ts). */
export type McpOptions = OptionsOf<typeof spec.options>;

/** The line for a person who started `agentbus mcp` in a terminal, where it would otherwise look hung. */
export function terminalHint(): string {
  const doc = join(packageRoot(), 'docs', 'install.md');
  const where = existsSync(doc) ? doc : 'docs/install.md of the agentbus-mcp package';
  return `agentbus mcp: waiting for an MCP client on stdin (a harness such as Claude Code or Codex starts this command itself); how to set that up: ${where}; Ctrl-C stops it\n`;
}

export async function mcpCommand(io: CliIo, options: McpOptions): Promise<number> {
  // A harness that stops its server with a signal still gets a clean shutdown: names released, lease handed back.
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // Until the database's first open settles (start-up-compiler.ts says why).
  const compiler = holdOptimisingCompiler({ execArgv: process.execArgv, nodeOptions: io.env.NODE_OPTIONS });
  try {
    // stderr only: stdout carries JSON-RPC and nothing else.
    if (io.stdinIsTty) io.stderr.write(terminalHint());
    const config = loadConfig({
      configPath: options.config,
      env: io.env,
      homeDir: io.homeDir,
      cwd: io.cwd,
    });
    // 1 when the database never opened: stderr already holds why (a harness shows it as the server's failure).
    return await runMcp({
      stdin: io.stdin,
      stdout: io.stdout,
      config,
      clock: io.clock,
      cwd: io.cwd,
      // Imported only once the first answer is out (run-mcp.ts): the tools pull in the whole bus.
      tools: async (services) => (await import('../../../mcp/tools/all-tools.js')).allTools(services),
      version: packageVersion(),
      stop: stop.signal,
      stderr: io.stderr,
      startedUp: () => compiler.release(),
    });
  } finally {
    compiler.release();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
