/**
 * Codex (the real binary, `codex exec`) with the hooks of docs/install.md,
 * against the model stand-in speaking the Responses API.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installSnippets, localised, snippet } from '../install/doc-snippets.js';
import { checkBusyAgent, runBusyAgent } from './support/busy-agent.js';
import { harnessBin } from './support/harness-bins.js';

type Json = Record<string, any>;

const toml = (value: string): string => JSON.stringify(value);

describe('Codex', () => {
  it('hears about a message while busy, cannot stop while it is unread, stops once it is received and acknowledged', async () => {
    const codex = harnessBin('codex');
    const result = await runBusyAgent((c) => {
      const codexHome = join(c.root, 'codex-home');
      mkdirSync(codexHome);
      const hooks = JSON.parse(localised(snippet(installSnippets(), 'codex-inbox-hooks').text)) as Json;
      for (const entries of Object.values(hooks.hooks as Record<string, Json[]>)) {
        for (const entry of entries) for (const hook of entry.hooks) hook.command = c.wrapHook(hook.command);
      }
      writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify(hooks));
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
      return {
        command: codex,
        args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', 'Work on your task; other agents may write to you.'],
        env: { ...c.agentbusEnv, PATH: c.path, HOME: c.home, CODEX_HOME: codexHome, STANDIN_KEY: 'stand-in', RUST_LOG: 'error' },
      };
    });
    checkBusyAgent(expect, result, { tool: 'PostToolUse', stop: 'Stop' });
    // Codex hands the tool nudge to the model as a developer message and the stop reason as a hook prompt.
    const turn4 = JSON.stringify(result.turns[4]!.body);
    expect(turn4).toMatch(/"role":"developer","content":\[\{"type":"input_text","text":"Agentbus: other agents wrote to you/);
    expect(JSON.stringify(result.turns[5]!.body)).toContain('<hook_prompt');
  });
});
