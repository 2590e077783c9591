/**
 * Stopping an `agentbus mcp` the way a harness does (SIGTERM) and waiting for
 * the exit itself. The SDK client's close() escalates to SIGKILL after 4 s,
 * which a loaded machine can reach, and a killed server releases nothing.
 */
import type { McpProcess } from '../support/mcp-process.js';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends SIGTERM and resolves once the process has exited (its names released on the way out). */
export async function stopCleanly(proc: McpProcess): Promise<void> {
  const pid = proc.transport.pid;
  if (pid === null) throw new Error('the server process is not running');
  process.kill(pid, 'SIGTERM');
  while (isRunning(pid)) await new Promise((r) => setTimeout(r, 20));
  await proc.close();
}
