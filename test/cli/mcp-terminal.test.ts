/**
 * `agentbus mcp` started by hand in a terminal says on stderr that it waits
 * for a harness and where the install docs are. The terminal is a real
 * pseudo-terminal from util-linux's `script`; Ctrl-C then stops the server.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENTBUS_BIN, serverEnv } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';

const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

describe('agentbus mcp in a terminal', () => {
  it('prints one line on stderr saying it waits for a harness and where the install docs are', async () => {
    const dir = tempDir();
    writeFileSync(`${dir}/config.json`, '{}');
    // stdout goes to a file so that what reaches the terminal is stderr only. `exec` replaces
    // the shell that `script` starts: dash (CI's /bin/sh) would otherwise die of the Ctrl-C
    // itself and `script` would report 130 whatever agentbus did.
    const command = `exec ${quote(process.execPath)} ${quote(AGENTBUS_BIN)} mcp > ${quote(`${dir}/stdout`)}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...serverEnv(dir), SHELL: '/bin/sh' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
    const deadline = Date.now() + 20_000;
    while (!screen.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.stdin.write('\x03'); // Ctrl-C, through the terminal: SIGINT, a clean stop
    const [code] = await once(child, 'close');
    const lines = screen.replace(/\^C/g, '').split(/\r?\n/).filter((l) => l.trim() !== '');
    expect(lines, screen).toHaveLength(1);
    expect(lines[0]).toMatch(/^agentbus mcp: waiting for an MCP client on stdin \(a harness such as Claude Code or Codex starts this command itself\); how to set that up: (\S+install\.md); Ctrl-C stops it$/);
    const doc = /how to set that up: (\S+install\.md);/.exec(lines[0] ?? '')?.[1] ?? '';
    expect(existsSync(doc), doc).toBe(true);
    expect(code).toBe(0);
  });
});
