/**
 * Claude Code and Codex (the real binaries, headless) against the model
 * stand-in, with an agentbus database that cannot be opened: the model's tool
 * result carries the storage code and the way out, not "Not connected" or
 * "Connection closed".
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBrokenDatabase, type BrokenDatabaseResult } from './support/broken-database.js';
import { harnessBin } from './support/harness-bins.js';
import { claudeEnv, codexEnv, writeCodexConfig } from './support/harness-launch.js';

function checkToolResult(r: BrokenDatabaseResult): void {
  const context = `harness stderr: ${r.stderr.slice(-3000)}\nsurprises: ${r.surprises.join('; ')}`;
  expect(r.surprises, context).toEqual([]);
  expect(r.exitCode, context).toBe(0);
  // The tool result, as the harness put it into the model's next request (JSON inside JSON: quotes may be escaped).
  expect(r.afterCall, context).toMatch(/database_corrupt/);
  expect(r.afterCall, context).toContain('agentbus reset');
  expect(r.afterCall, context).toContain('agentbus.db');
  expect(r.afterCall).not.toMatch(/Not connected|Connection closed/i);
}

describe('a database that cannot be opened, through a real harness', () => {
  it('Claude Code: the model gets database_corrupt and the way out as the tool result', async () => {
    const claude = harnessBin('claude');
    const result = await runBrokenDatabase((c) => {
      writeFileSync(join(c.root, 'mcp.json'), JSON.stringify({ mcpServers: { agentbus: { command: c.node, args: [c.bin, 'mcp'], env: c.agentbusEnv } } }));
      return {
        command: claude,
        args: ['-p', 'Register on agentbus.', '--output-format', 'stream-json', '--verbose', '--mcp-config', join(c.root, 'mcp.json'), '--strict-mcp-config', '--allowedTools', 'mcp__agentbus'],
        env: claudeEnv(c),
      };
    });
    checkToolResult(result);
  });

  it('Codex: the model gets database_corrupt and the way out as the tool result', async () => {
    const codex = harnessBin('codex');
    const result = await runBrokenDatabase((c) => {
      const codexHome = join(c.root, 'codex-home');
      mkdirSync(codexHome);
      writeCodexConfig(c, codexHome);
      return {
        command: codex,
        args: ['exec', '--json', '--skip-git-repo-check', 'Register on agentbus.'],
        env: codexEnv(c, codexHome),
      };
    });
    checkToolResult(result);
  });
});
