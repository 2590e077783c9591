/**
 * Gemini CLI (the real binary, `gemini -p`) with the hooks of
 * docs/install.md, against the model stand-in speaking the Gemini API.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installSnippets, localised, snippet } from '../install/doc-snippets.js';
import { checkBusyAgent, runBusyAgent, type Launch, type LaunchContext } from './support/busy-agent.js';
import { checkDirectAgent, runDirectAgent } from './support/direct-agent.js';
import { harnessBin } from './support/harness-bins.js';

type Json = Record<string, any>;

/** The documented launch: settings with the hooks of docs/install.md in a HOME of the test's. */
function geminiLaunch(c: LaunchContext): Launch {
  const gemini = harnessBin('gemini');
  const documented = JSON.parse(localised(snippet(installSnippets(), 'gemini-inbox-settings').text)) as Json;
  for (const entries of Object.values(documented.hooks as Record<string, Json[]>)) {
    for (const entry of entries) for (const hook of entry.hooks) hook.command = c.wrapHook(hook.command);
  }
  mkdirSync(join(c.home, '.gemini'), { recursive: true });
  writeFileSync(
    join(c.home, '.gemini', 'settings.json'),
    JSON.stringify({
      // Without it Gemini CLI refuses an API key ("Invalid auth method selected").
      security: { auth: { selectedType: 'gemini-api-key' } },
      mcpServers: { agentbus: { command: c.node, args: [c.bin, 'mcp'], env: c.agentbusEnv, trust: true } },
      ...documented,
    }),
  );
  return {
    command: gemini,
    args: ['-p', 'Work on your task; other agents may write to you.', '--yolo'],
    env: {
      ...c.agentbusEnv,
      PATH: c.path,
      HOME: c.home,
      GEMINI_API_KEY: 'stand-in',
      GOOGLE_GEMINI_BASE_URL: c.modelUrl,
      GEMINI_CLI_NO_RELAUNCH: 'true',
      // MCP servers are off in an untrusted folder.
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    },
  };
}

describe('Gemini CLI', () => {
  it('hears about a message while busy, cannot stop while it is unread, stops once it is received and acknowledged', async () => {
    const result = await runBusyAgent(geminiLaunch);
    checkBusyAgent(expect, result, { tool: 'AfterTool', stop: 'AfterAgent' });
    // Gemini CLI appends the tool nudge to the tool result it hands the model.
    expect(JSON.stringify(result.turns[4]!.body)).toContain('<hook_context>Agentbus: other agents wrote to you');
  });

  it("learns of a direct message through the hook, answers it; the asker's ask-and-wait gets the answer and sees it acknowledged", async () => {
    checkDirectAgent(expect, await runDirectAgent(geminiLaunch), 'AfterTool');
  });
});
