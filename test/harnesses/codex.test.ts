/**
 * Codex (the real binary, `codex exec`) with the hooks of docs/install.md,
 * against the model stand-in speaking the Responses API.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installSnippets, localised, snippet } from '../install/doc-snippets.js';
import { checkBusyAgent, runBusyAgent, type Launch, type LaunchContext } from './support/busy-agent.js';
import { checkDirectAgent, runDirectAgent } from './support/direct-agent.js';
import { harnessBin } from './support/harness-bins.js';
import { codexEnv, writeCodexConfig } from './support/harness-launch.js';

type Json = Record<string, any>;

/** The documented launch: hooks of docs/install.md in a CODEX_HOME of the test's. */
function codexLaunch(c: LaunchContext): Launch {
  const codex = harnessBin('codex');
  const codexHome = join(c.root, 'codex-home');
  mkdirSync(codexHome);
  const hooks = JSON.parse(localised(snippet(installSnippets(), 'codex-inbox-hooks').text)) as Json;
  for (const entries of Object.values(hooks.hooks as Record<string, Json[]>)) {
    for (const entry of entries) for (const hook of entry.hooks) hook.command = c.wrapHook(hook.command);
  }
  writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify(hooks));
  writeCodexConfig(c, codexHome);
  return {
    command: codex,
    args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', 'Work on your task; other agents may write to you.'],
    env: codexEnv(c, codexHome),
  };
}

describe('Codex', () => {
  it('hears about a message while busy, cannot stop while it is unread, stops once it is received and acknowledged', async () => {
    const result = await runBusyAgent(codexLaunch);
    checkBusyAgent(expect, result, { tool: 'PostToolUse', stop: 'Stop' });
    // Codex hands the tool nudge to the model as a developer message and the stop reason as a hook prompt.
    const turn4 = JSON.stringify(result.turns[4]!.body);
    expect(turn4).toMatch(/"role":"developer","content":\[\{"type":"input_text","text":"Agentbus: other agents wrote to you/);
    expect(JSON.stringify(result.turns[5]!.body)).toContain('<hook_prompt');
  });

  it("learns of a direct message through the hook, answers it; the asker's ask-and-wait gets the answer and sees it acknowledged", async () => {
    checkDirectAgent(expect, await runDirectAgent(codexLaunch), 'PostToolUse');
  });
});
