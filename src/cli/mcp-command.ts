/** `agentbus mcp`: the stdio MCP server a harness spawns. */
import { loadConfig } from '../config.js';
import { allTools } from '../mcp/tools/all-tools.js';
import { runMcp } from '../mcp/run-mcp.js';
import { packageVersion } from '../package-version.js';
import type { CliIo } from './cli-io.js';

export async function mcpCommand(io: CliIo, flags: Record<string, unknown>): Promise<number> {
  const config = loadConfig({
    configPath: typeof flags.config === 'string' ? flags.config : undefined,
    env: io.env,
    homeDir: io.homeDir,
    cwd: io.cwd,
  });
  // A harness that stops its server with a signal still gets a clean shutdown: names released, lease handed back.
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await runMcp({
      stdin: io.stdin,
      stdout: io.stdout,
      config,
      clock: io.clock,
      cwd: io.cwd,
      tools: allTools,
      version: packageVersion(),
      stop: stop.signal,
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  return 0;
}
