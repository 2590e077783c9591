import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { ancestors, harnessProcess, isLauncher } from '../../src/harness/ancestry.js';

const ancestryModule = fileURLToPath(new URL('../../dist/src/harness/ancestry.js', import.meta.url));

describe('process ancestry', () => {
  it('walks up from a child through a shell to this process, which is its harness', () => {
    const script = `import(${JSON.stringify(ancestryModule)}).then((m) => { const chain = m.ancestors(); process.stdout.write(JSON.stringify({ chain, harness: m.harnessProcess(chain) })); })`;
    // `sh -c` with two commands, so the shell stays between this process and node.
    const out = execFileSync('/bin/sh', ['-c', `"${process.execPath}" -e '${script}'; true`], { encoding: 'utf8' });
    const { chain, harness } = JSON.parse(out) as { chain: { identity: { pid: number; startTime: number }; command: string }[]; harness: { identity: { pid: number } } };
    expect(isLauncher(chain[0]!.command)).toBe(true);
    expect(chain[1]!.identity.pid).toBe(process.pid);
    expect(chain[1]!.identity.startTime).toBe(currentProcess().startTime);
    expect(harness.identity.pid).toBe(process.pid);
  });

  it("this process's own chain starts at its parent and ends before init", () => {
    const chain = ancestors();
    expect(chain[0]?.identity.pid).toBe(process.ppid);
    expect(chain.every((p) => p.identity.pid > 1)).toBe(true);
  });

  it('treats shells, env and package runners as launchers, anything else as a possible harness', () => {
    for (const command of ['sh', 'bash', 'dash', 'zsh', 'env', 'npm exec agentbus', 'npx', 'pnpm']) expect(isLauncher(command)).toBe(true);
    for (const command of ['claude', 'codex', 'node', 'gemini', 'Cursor', 'git']) expect(isLauncher(command)).toBe(false);
    const chain = [
      { identity: { pid: 10, startTime: 1, realm: undefined }, command: 'sh' },
      { identity: { pid: 9, startTime: 1, realm: undefined }, command: 'npm exec agentbus mcp' },
      { identity: { pid: 8, startTime: 1, realm: undefined }, command: 'claude' },
    ];
    expect(harnessProcess(chain)?.command).toBe('claude');
    expect(harnessProcess(chain.slice(0, 2))).toBeUndefined();
  });
});
