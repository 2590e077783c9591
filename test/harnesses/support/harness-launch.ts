/**
 * What every harness test repeats to launch Claude Code and Codex against the
 * model stand-in: Claude Code's environment, Codex's config.toml naming the
 * stand-in and the agentbus server, and running the harness to its exit.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Launch, LaunchContext } from './busy-agent.js';

const toml = (value: string): string => JSON.stringify(value);

/** The environment of a headless Claude Code talking to the stand-in, with no traffic elsewhere. */
export function claudeEnv(c: LaunchContext): Record<string, string> {
  return {
    ...c.agentbusEnv,
    PATH: c.path,
    HOME: c.home,
    ANTHROPIC_BASE_URL: c.modelUrl,
    ANTHROPIC_API_KEY: 'stand-in',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

/** Writes `<codexHome>/config.toml`: the stand-in as the model provider, agentbus as a required MCP server. */
export function writeCodexConfig(c: LaunchContext, codexHome: string): void {
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "stand-in"',
      'model_provider = "standin"',
      '[model_providers.standin]',
      'name = "stand-in"',
      `base_url = ${toml(`${c.modelUrl}/v1`)}`,
      'wire_api = "responses"',
      'env_key = "STANDIN_KEY"',
      '[mcp_servers.agentbus]',
      `command = ${toml(c.node)}`,
      `args = [${toml(c.bin)}, "mcp"]`,
      // Without it Codex may start the first turn before the server's tools are listed.
      'required = true',
      '[mcp_servers.agentbus.env]',
      ...Object.entries(c.agentbusEnv).map(([k, v]) => `${k} = ${toml(v)}`),
      '',
    ].join('\n'),
  );
}

/** The environment of `codex exec` with `codexHome`. */
export function codexEnv(c: LaunchContext, codexHome: string): Record<string, string> {
  return { ...c.agentbusEnv, PATH: c.path, HOME: c.home, CODEX_HOME: codexHome, STANDIN_KEY: 'stand-in', RUST_LOG: 'error' };
}

/** Runs the harness in `cwd` until it exits, killing it after `timeoutMs` (a surprise then says so). */
export async function runHarness(launch: Launch, cwd: string, timeoutMs: number, surprises: string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const child = spawn(launch.command, [...launch.args], { cwd, env: { ...launch.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => {
    surprises.push(`the harness did not finish within ${timeoutMs} ms`);
    child.kill('SIGKILL');
  }, timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}
